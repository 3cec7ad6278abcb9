/**
 * The Access service: directly, on a layer built over a temp database (every rule of what an end
 * user may run), and through HTTP set-up (memberships, grants, admissions and deletes changing
 * access at once).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AppClock } from "../../server/platform/clock.js"
import { DatabaseLive } from "../../server/platform/sql/database.js"
import { AccountsService } from "../../server/identity/service.js"
import { AccessService, type AccessRequest } from "../../server/provisioning/access/service.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPlan, createSuite, createTargets, insertEndUser, insertPortal, subscribe } from "./support.js"
import { organizationId } from "../support/fixtures.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()

describe("AccessService on its own layer", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-access-"))
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(AccessService.Default, AccountsService.Default).pipe(
      Layer.provideMerge(AppClock.system),
      Layer.provideMerge(DatabaseLive(dir))
    )
  )
  const run = <A, E>(effect: Effect.Effect<A, E, AccessService | AccountsService | SqlClient.SqlClient>) => runtime.runPromise(effect)
  // Hand-written fixture rows: writes of every table (`write-declaration.ts`).
  const exec = (write: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) => run(writing(writesEveryTable)(Effect.flatMap(SqlClient.SqlClient, write)))
  const at = "2026-01-01T00:00:00.000Z"
  let org = ""
  let otherOrg = ""

  const orgOf = async (slug: string) => (await run(Effect.flatMap(AccountsService, (a) => a.createOrganization({ slug, plan: "pro" })))).id
  const item = async (table: "apps" | "flows" | "agents", organization = org) => {
    const id = randomUUID()
    await exec((sql) => sql`INSERT INTO ${sql(table)} (id, organization_id, name, created_at, updated_at) VALUES (${id}, ${organization}, 'x', ${at}, ${at})`)
    return id
  }
  const endUser = async (state = "active", organization = org) => {
    const id = randomUUID()
    await exec((sql) => sql`INSERT INTO end_users (id, organization_id, email, email_key, state, created_at, updated_at)
      VALUES (${id}, ${organization}, ${id + "@example.com"}, ${id + "@example.com"}, ${state}, ${at}, ${at})`)
    return id
  }
  const group = async (organization = org) => {
    const id = randomUUID()
    await exec((sql) => sql`INSERT INTO user_groups (id, organization_id, name, created_at, updated_at) VALUES (${id}, ${organization}, 'g', ${at}, ${at})`)
    return id
  }
  const plan = async () => {
    const groupId = await group()
    const planId = randomUUID()
    await exec((sql) => Effect.zipRight(
      sql`UPDATE user_groups SET plan_id = ${planId} WHERE id = ${groupId}`,
      sql`INSERT INTO tier_plans (id, organization_id, name, credit_allowance, group_id, created_at) VALUES (${planId}, ${org}, 'p', 10, ${groupId}, ${at})`
    ))
    return { planId, groupId }
  }
  const join_ = (groupId: string, endUserId: string, organization = org) =>
    exec((sql) => sql`INSERT INTO group_members (group_id, end_user_id, organization_id, created_at) VALUES (${groupId}, ${endUserId}, ${organization}, ${at})`)
  const hold = (endUserId: string, planId: string) =>
    exec((sql) => sql`INSERT INTO subscriptions (id, organization_id, end_user_id, tier_plan_id, status, credit_allowance, credits_reset_at, created_at)
      VALUES (${randomUUID()}, ${org}, ${endUserId}, ${planId}, 'active', 10, ${at}, ${at})`)
  const grant = (groupId: string, kind: "app" | "suite", targetId: string, organization = org) =>
    exec((sql) => sql`INSERT INTO group_grants (id, organization_id, group_id, target_kind, target_id, created_at)
      VALUES (${randomUUID()}, ${organization}, ${groupId}, ${kind}, ${targetId}, ${at})`)
  const userGrant = (endUserId: string, kind: "app" | "suite", targetId: string, deploymentId: string | null = null) =>
    exec((sql) => sql`INSERT INTO end_user_grants (id, organization_id, end_user_id, target_kind, target_id, deployment_id, created_at)
      VALUES (${randomUUID()}, ${org}, ${endUserId}, ${kind}, ${targetId}, ${deploymentId}, ${at})`)
  const suite = async (appIds: ReadonlyArray<string>, organization = org) => {
    const id = randomUUID()
    await exec((sql) => sql`INSERT INTO suites (id, organization_id, name, created_at) VALUES (${id}, ${organization}, 's', ${at})`)
    for (const [position, appId] of appIds.entries()) {
      await exec((sql) => sql`INSERT INTO suite_apps (suite_id, app_id, position) VALUES (${id}, ${appId}, ${position})`)
    }
    return id
  }
  const portal = async () => {
    const id = randomUUID()
    await exec((sql) => sql`INSERT INTO portals (id, organization_id, name, created_at) VALUES (${id}, ${org}, 'portal', ${at})`)
    return id
  }
  const admit = (portalId: string, groupId: string) =>
    exec((sql) => sql`INSERT INTO portal_admissions (portal_id, group_id, organization_id, created_at) VALUES (${portalId}, ${groupId}, ${org}, ${at})`)
  const appsFor = (request: Omit<AccessRequest, "organizationId"> & { organizationId?: string }) =>
    run(Effect.flatMap(AccessService, (access) => access.appsFor({ organizationId: org, ...request })))

  beforeAll(async () => {
    org = await orgOf("access")
    otherOrg = await orgOf("elsewhere")
  })
  afterAll(async () => {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it("is empty for a person in no group, and for unknown or foreign end users", async () => {
    const alone = await endUser()
    expect(await appsFor({ endUserId: alone })).toEqual([])
    expect(await appsFor({ endUserId: randomUUID() })).toEqual([])
    const foreign = await endUser("active", otherOrg)
    const theirGroup = await group(otherOrg)
    await join_(theirGroup, foreign, otherOrg)
    await grant(theirGroup, "app", await item("apps", otherOrg), otherOrg)
    expect(await appsFor({ endUserId: foreign })).toEqual([])
    expect((await appsFor({ endUserId: foreign, organizationId: otherOrg })).length).toBe(1)
  })

  it("is the union of direct groups' and held plans' grants, Suites expanded, Flows and Agents included", async () => {
    const [app1, app2, app3, flow, agent] = [await item("apps"), await item("apps"), await item("apps"), await item("flows"), await item("agents")]
    const person = await endUser()
    const direct = await group()
    const second = await group()
    const gold = await plan()
    await join_(direct, person)
    await join_(second, person)
    await hold(person, gold.planId)
    await grant(direct, "app", app1)
    await grant(direct, "app", flow)
    await grant(second, "suite", await suite([app2, app1]))
    await grant(gold.groupId, "app", agent)
    const unjoined = await group()
    await grant(unjoined, "app", app3)
    expect(await appsFor({ endUserId: person })).toEqual(sorted([app1, app2, flow, agent]))
    const canRun = (targetId: string) => run(Effect.flatMap(AccessService, (a) => a.canRun({ organizationId: org, endUserId: person, targetId })))
    expect(await canRun(agent)).toBe(true)
    expect(await canRun(app3)).toBe(false)
  })

  it("gives nothing to revoked and deleted accounts; pending (invited) accounts have their access", async () => {
    const app = await item("apps")
    const shared = await group()
    await grant(shared, "app", app)
    const states = ["active", "pending", "revoked", "deleted"] as const
    const people = await Promise.all(states.map((state) => endUser(state)))
    for (const person of people) await join_(shared, person)
    const answers = await Promise.all(people.map((endUserId) => appsFor({ endUserId })))
    expect(answers).toEqual([[app], [app], [], []])
  })

  it("counts deprecated per-user grants, Suites expanded", async () => {
    const [app, inSuite] = [await item("apps"), await item("apps")]
    const person = await endUser()
    await userGrant(person, "app", app)
    await userGrant(person, "suite", await suite([inSuite]))
    expect(await appsFor({ endUserId: person })).toEqual(sorted([app, inSuite]))
  })

  it("at a Portal, counts only the groups it admits (plan groups included) and per-user grants unscoped or scoped to it", async () => {
    const [a, b, c, d, e] = [await item("apps"), await item("apps"), await item("apps"), await item("apps"), await item("apps")]
    const person = await endUser()
    const admittedGroup = await group()
    const otherGroup = await group()
    const silver = await plan()
    await join_(admittedGroup, person)
    await join_(otherGroup, person)
    await hold(person, silver.planId)
    await grant(admittedGroup, "app", a)
    await grant(otherGroup, "app", b)
    await grant(silver.groupId, "app", c)
    const here = await portal()
    const there = await portal()
    await admit(here, admittedGroup)
    await admit(here, silver.groupId)
    await admit(there, otherGroup)
    await userGrant(person, "app", d, here)
    await userGrant(person, "app", e, there)
    expect(await appsFor({ endUserId: person, portalId: here })).toEqual(sorted([a, c, d]))
    expect(await appsFor({ endUserId: person, portalId: there })).toEqual(sorted([b, e]))
    expect(await appsFor({ endUserId: person, portalId: randomUUID() })).toEqual([])
    expect(await appsFor({ endUserId: person })).toEqual(sorted([a, b, c, d, e]))
  })

  it("drops grants whose target is gone or belongs to another organization", async () => {
    const kept = await item("apps")
    const gone = await item("apps")
    const foreign = await item("apps", otherOrg)
    const person = await endUser()
    const g = await group()
    await join_(g, person)
    for (const id of [kept, gone, foreign]) await grant(g, "app", id)
    await grant(g, "suite", await suite([foreign], otherOrg))
    await exec((sql) => sql`DELETE FROM apps WHERE id = ${gone}`)
    expect(await appsFor({ endUserId: person })).toEqual([kept])
  })
})

describe("access through HTTP set-up", () => {
  let server: TestServer
  let org = ""
  beforeAll(async () => {
    server = await startTestServer()
    org = await organizationId(server)
  })
  afterAll(() => server.stop())
  const appsFor = (endUserId: string, portalId?: string) =>
    server.admin(Effect.flatMap(AccessService, (access) => access.appsFor({ organizationId: org, endUserId, portalId })))

  it("follows members, grants, plans, admissions and deletes at once; the account and its plans stay", async () => {
    const { appId, flowId } = await createTargets(server)
    const other = await createTargets(server)
    const suiteId = await createSuite(server, "Bundle", [other.appId])
    const group = (await server.request("POST", "/user-groups", { body: { name: "Access" } })).body.group.id
    await server.request("POST", `/user-groups/${group}/grants`, { body: { targetKind: "app", targetId: appId } })
    const person = (await server.request("POST", `/user-groups/${group}/members`, { body: { email: "access@example.com", sendEmail: false } })).body.endUserId
    expect(await appsFor(person)).toEqual([appId])
    await server.request("POST", `/user-groups/${group}/grants`, { body: { targetKind: "suite", targetId: suiteId } })
    expect(await appsFor(person)).toEqual(sorted([appId, other.appId]))

    const plan = await createPlan(server, "Flows plan")
    await server.request("POST", `/user-groups/${plan.groupId}/grants`, { body: { targetKind: "app", targetId: flowId } })
    const subscription = await subscribe(server, person, plan.id)
    expect(await appsFor(person)).toEqual(sorted([appId, other.appId, flowId]))

    const portal = await insertPortal(server, { name: "Front door" })
    expect(await appsFor(person, portal)).toEqual([])
    await server.request("POST", `/portals/${portal}/admissions`, { body: { groupId: plan.groupId } })
    expect(await appsFor(person, portal)).toEqual([flowId])

    expect((await server.request("DELETE", `/user-groups/${group}/members/${person}`)).body.removed).toBe(true)
    expect(await appsFor(person)).toEqual([flowId])
    await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: person, sendEmail: false } })
    expect(await appsFor(person)).toEqual(sorted([appId, other.appId, flowId]))
    expect((await server.request("DELETE", `/user-groups/${group}`)).status).toBe(200)
    expect(await appsFor(person)).toEqual([flowId])
    const held = await server.admin(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT id FROM subscriptions WHERE end_user_id = ${person}`))
    expect(held).toEqual([{ id: subscription }])

    const revoked = await insertEndUser(server, { email: "revoked-access@example.com", state: "revoked" })
    await subscribe(server, revoked, plan.id)
    expect(await appsFor(revoked)).toEqual([])
  })
})

describe("access across the end-user lifecycle", () => {
  let server: TestServer
  let org = ""
  beforeAll(async () => {
    server = await startTestServer()
    org = await organizationId(server)
  })
  afterAll(() => server.stop())
  const appsFor = (endUserId: string) => server.admin(Effect.flatMap(AccessService, (access) => access.appsFor({ organizationId: org, endUserId })))
  const rosterOf = async (groupId: string) => (await server.request("GET", `/user-groups/${groupId}`)).body

  it("an invited (pending) identity becomes the provisioned account; revoke stops access, delete leaves the roster", async () => {
    const { appId, agentId } = await createTargets(server)
    const plan = await createPlan(server, "Lifecycle")
    await server.request("POST", `/user-groups/${plan.groupId}/grants`, { body: { targetKind: "app", targetId: agentId } })
    const group = (await server.request("POST", "/user-groups", { body: { name: "Invitees" } })).body.group.id
    await server.request("POST", `/user-groups/${group}/grants`, { body: { targetKind: "app", targetId: appId } })
    const invited = (await server.request("POST", `/user-groups/${group}/members`, { body: { email: "life@example.com" } })).body.endUserId
    expect(await appsFor(invited)).toEqual([appId])
    expect((await rosterOf(group)).members).toEqual([expect.objectContaining({ endUserId: invited, state: "pending" })])

    const provisioned = await server.request("POST", "/end-users", { body: { email: "LIFE@example.com", tierPlanIds: [plan.id] } })
    expect(provisioned.status).toBe(201)
    expect(provisioned.body.endUser.id).toBe(invited)
    expect((await rosterOf(group)).members).toEqual([expect.objectContaining({ endUserId: invited, state: "active", via: "direct" })])
    expect((await rosterOf(plan.groupId)).members).toEqual([expect.objectContaining({ endUserId: invited, state: "active", via: "plan" })])
    expect(await appsFor(invited)).toEqual(sorted([appId, agentId]))

    expect((await server.request("POST", `/end-users/${invited}/revoke`)).status).toBe(200)
    expect(await appsFor(invited)).toEqual([])
    expect((await rosterOf(group)).members).toEqual([expect.objectContaining({ endUserId: invited, state: "revoked" })])
    expect((await server.request("POST", "/end-users", { body: { email: "life@example.com" } })).status).toBe(200)
    expect(await appsFor(invited)).toEqual(sorted([appId, agentId]))

    expect((await server.request("DELETE", `/end-users/${invited}`)).status).toBe(200)
    expect(await appsFor(invited)).toEqual([])
    expect(await rosterOf(group)).toEqual(expect.objectContaining({ members: [], group: expect.objectContaining({ memberCount: 0 }) }))
    expect((await rosterOf(plan.groupId)).group.memberCount).toBe(0)
    const again = await server.request("POST", `/user-groups/${group}/members`, { body: { email: "life@example.com" } })
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe("deleted_identity")
  })
})
