/**
 * Group grants through HTTP: the grant rows of the "Group membership and grants" state table (201
 * new, 200 identical held with the same grant), App, Flow, Agent and Suite targets, plan groups
 * holding grants, `grant_target_not_found` and `portal_scope_unsupported` writing nothing, removal,
 * and isolation between organizations.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPlan, createSuite, createTargets, provisioningCounts } from "./support.js"

let server: TestServer
let other: string
let targets: { appId: string; agentId: string; flowId: string }
let suiteId: string

beforeAll(async () => {
  server = await startTestServer()
  other = await server.createOrganization("other")
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("other", { enable: ["groups", "apps"] })))
  targets = await createTargets(server)
  suiteId = await createSuite(server, "Everything", [targets.appId])
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const newGroup = async (name: string, key?: string) =>
  (await server.request("POST", "/user-groups", { ...(key === undefined ? {} : { key }), body: { name } })).body.group.id as string
const grant = (groupId: string, body: unknown, key?: string) =>
  server.request("POST", `/user-groups/${groupId}/grants`, { ...(key === undefined ? {} : { key }), body })
const grantsOf = async (groupId: string) => (await server.request("GET", `/user-groups/${groupId}`)).body.grants as Array<any>

describe("grant access", () => {
  it("identical grant absent: 201 created true; held: 200 created false with the same grant", async () => {
    const group = await newGroup("Granted")
    const first = await grant(group, { targetKind: "app", targetId: targets.appId })
    expect(first.status).toBe(201)
    expect(first.body).toEqual({ ok: true, grantId: expect.any(String), created: true })
    const before = await provisioningCounts(server)
    const again = await grant(group, { targetKind: "app", targetId: targets.appId })
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ ok: true, grantId: first.body.grantId, created: false })
    expect(await provisioningCounts(server)).toEqual(before)
    expect(await grantsOf(group)).toEqual([
      { grantId: first.body.grantId, targetKind: "app", targetId: targets.appId, createdAt: expect.any(String) }
    ])
  })

  it("takes an App, a Flow or an Agent as `app`, and a Suite as `suite`, each its own grant", async () => {
    const group = await newGroup("Every kind")
    for (const targetId of [targets.appId, targets.flowId, targets.agentId]) {
      server.clock.advance(1)
      expect((await grant(group, { targetKind: "app", targetId })).status).toBe(201)
    }
    server.clock.advance(1)
    expect((await grant(group, { targetKind: "suite", targetId: suiteId })).status).toBe(201)
    expect((await grantsOf(group)).map((g) => [g.targetKind, g.targetId])).toEqual([
      ["app", targets.appId],
      ["app", targets.flowId],
      ["app", targets.agentId],
      ["suite", suiteId]
    ])
  })

  it("lets a plan group hold grants (that is how a plan gives access)", async () => {
    const plan = await createPlan(server, "Pro plan")
    const response = await grant(plan.groupId, { targetKind: "suite", targetId: suiteId })
    expect(response.status).toBe(201)
    expect((await grantsOf(plan.groupId)).map((g) => g.targetId)).toEqual([suiteId])
  })

  it("refuses unknown and mismatched targets with 422 grant_target_not_found, writing nothing", async () => {
    const group = await newGroup("Refused targets")
    const theirs = await createTargets(server, other)
    const theirSuite = await createSuite(server, "Theirs", [theirs.appId], "other")
    const before = await provisioningCounts(server)
    for (const body of [
      { targetKind: "app", targetId: unknownId() },
      { targetKind: "suite", targetId: unknownId() },
      { targetKind: "app", targetId: suiteId },
      { targetKind: "suite", targetId: targets.appId },
      { targetKind: "app", targetId: theirs.appId },
      { targetKind: "app", targetId: theirs.agentId },
      { targetKind: "suite", targetId: theirSuite }
    ]) {
      expectError(await grant(group, body), 422, "grant_target_not_found")
    }
    expect(await provisioningCounts(server)).toEqual(before)
    expect((await grant(await newGroup("Theirs", other), { targetKind: "suite", targetId: theirSuite }, other)).status).toBe(201)
  })

  it("refuses deploymentId with 400 portal_scope_unsupported, writing nothing", async () => {
    const group = await newGroup("Scoped grant")
    const before = await provisioningCounts(server)
    expectError(await grant(group, { targetKind: "app", targetId: targets.appId, deploymentId: "portal-1" }), 400, "portal_scope_unsupported")
    expectError(await grant(group, { targetKind: "app", targetId: unknownId(), deploymentId: "portal-1" }), 400, "portal_scope_unsupported")
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("refuses bad bodies and unknown or foreign groups, writing nothing", async () => {
    const group = await newGroup("Bodies")
    const theirGroup = await newGroup("Foreign", other)
    const before = await provisioningCounts(server)
    expectError(await grant(group, { targetKind: "page", targetId: targets.appId }), 400, "invalid_request")
    expectError(await grant(group, { targetKind: "app", targetId: "not-a-uuid" }), 400, "invalid_request")
    expectError(await grant(group, { targetKind: "app" }), 400, "invalid_request")
    expectError(await grant(group, { targetKind: "app", targetId: targets.appId, deny: true }), 400, "invalid_request")
    expectError(await grant(unknownId(), { targetKind: "app", targetId: targets.appId }), 404, "not_found")
    expectError(await grant(theirGroup, { targetKind: "app", targetId: targets.appId }), 404, "not_found")
    expect(await provisioningCounts(server)).toEqual(before)
  })
})

describe("concurrent identical grants", () => {
  it("create one grant: one 201, the rest 200 with its id", async () => {
    const group = await newGroup("Raced")
    const answers = await Promise.all(Array.from({ length: 5 }, () => grant(group, { targetKind: "app", targetId: targets.agentId })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 201])
    expect(new Set(answers.map((a) => a.body.grantId)).size).toBe(1)
    expect(await grantsOf(group)).toHaveLength(1)
  })
})

describe("remove a grant", () => {
  it("removes the group's grant; an unknown grant or another group's grant is 404", async () => {
    const group = await newGroup("Revoking")
    const neighbour = await newGroup("Neighbour")
    const held = (await grant(group, { targetKind: "app", targetId: targets.appId })).body.grantId
    const theirs = (await grant(neighbour, { targetKind: "app", targetId: targets.appId })).body.grantId
    expectError(await server.request("DELETE", `/user-groups/${group}/grants/${theirs}`), 404, "not_found")
    expectError(await server.request("DELETE", `/user-groups/${group}/grants/${unknownId()}`), 404, "not_found")
    expectError(await server.request("DELETE", `/user-groups/${unknownId()}/grants/${held}`), 404, "not_found")
    const response = await server.request("DELETE", `/user-groups/${group}/grants/${held}`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true })
    expect(await grantsOf(group)).toEqual([])
    expect((await grantsOf(neighbour)).map((g) => g.grantId)).toEqual([theirs])
    expectError(await server.request("DELETE", `/user-groups/${group}/grants/${held}`), 404, "not_found")
    const regranted = await grant(group, { targetKind: "app", targetId: targets.appId })
    expect(regranted.status).toBe(201)
    expect(regranted.body.grantId).not.toBe(held)
  })
})
