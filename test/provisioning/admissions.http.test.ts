/**
 * Portal admissions through HTTP: admit (201 new, 200 held), list with paging, remove (idempotent),
 * plan groups admitted, `group_not_found` for an unknown group in the body, `not_found` for an
 * unknown Portal, the `groups` gate, scopes, isolation, and the cascade when a group is deleted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPlan, insertPortal, provisioningCounts, setGroupsGate } from "./support.js"

let server: TestServer
let other: string
let portal: string

beforeAll(async () => {
  server = await startTestServer()
  other = await server.createOrganization("other")
  await setGroupsGate(server, true, "other")
  portal = await insertPortal(server, { name: "Members" })
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const newGroup = async (name: string, key?: string) =>
  (await server.request("POST", "/user-groups", { ...(key === undefined ? {} : { key }), body: { name } })).body.group.id as string
const admit = (portalId: string, groupId: string, key?: string) =>
  server.request("POST", `/portals/${portalId}/admissions`, { ...(key === undefined ? {} : { key }), body: { groupId } })
const admitted = async (portalId: string) =>
  (await server.request("GET", `/portals/${portalId}/admissions?limit=200`)).body.admissions.map((a: any) => a.groupId)

describe("admit a group", () => {
  it("new: 201 created true; admitted already: 200 created false, nothing written", async () => {
    const group = await newGroup("Staff")
    const at = new Date(server.clock.now()).toISOString()
    const first = await admit(portal, group)
    expect(first.status).toBe(201)
    expect(first.body).toEqual({ ok: true, created: true, admission: { groupId: group, groupName: "Staff", planId: null, createdAt: at } })
    server.clock.advance(1_000)
    const before = await provisioningCounts(server)
    const again = await admit(portal, group)
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ ok: true, created: false, admission: first.body.admission })
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("admits a plan's group (the Portal then admits the plan's holders)", async () => {
    const plan = await createPlan(server, "Gold")
    const response = await admit(portal, plan.groupId)
    expect(response.status).toBe(201)
    expect(response.body.admission).toEqual(expect.objectContaining({ groupId: plan.groupId, groupName: "Gold", planId: plan.id }))
  })

  it("refuses an unknown or foreign group (422), an unknown or foreign Portal (404) and bad bodies, writing nothing", async () => {
    const group = await newGroup("Mine")
    const theirGroup = await newGroup("Theirs", other)
    const theirPortal = await insertPortal(server, { name: "Their portal", org: "other" })
    const before = await provisioningCounts(server)
    expectError(await admit(portal, unknownId()), 422, "group_not_found")
    expectError(await admit(portal, theirGroup), 422, "group_not_found")
    expectError(await admit(unknownId(), group), 404, "not_found")
    expectError(await admit(theirPortal, group), 404, "not_found")
    expectError(await admit("not-a-portal", group), 404, "not_found")
    expectError(await admit(portal, "not-a-uuid"), 400, "invalid_request")
    expectError(await server.request("POST", `/portals/${portal}/admissions`, { body: {} }), 400, "invalid_request")
    expectError(await server.request("POST", `/portals/${portal}/admissions`, { body: { groupId: group, extra: 1 } }), 400, "invalid_request")
    expect(await provisioningCounts(server)).toEqual(before)
    expect((await admit(theirPortal, theirGroup, other)).status).toBe(201)
  })
})

describe("concurrent admissions", () => {
  it("admit a group once: one 201, the rest 200", async () => {
    const group = await newGroup("Raced in")
    const answers = await Promise.all(Array.from({ length: 5 }, () => admit(portal, group)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 201])
    expect(await sql(server, (db) => db`SELECT group_id FROM portal_admissions WHERE group_id = ${group}`)).toEqual([{ group_id: group }])
  })
})

describe("list admissions", () => {
  it("lists oldest first in pages; an unknown or foreign Portal is 404", async () => {
    const fresh = await insertPortal(server, { name: "Paged" })
    const ids: Array<string> = []
    for (const name of ["One", "Two", "Three"]) {
      server.clock.advance(1)
      const id = await newGroup(name)
      ids.push(id)
      expect((await admit(fresh, id)).status).toBe(201)
    }
    const first = await server.request("GET", `/portals/${fresh}/admissions?limit=2`)
    expect(first.status).toBe(200)
    expect(first.body.admissions.map((a: any) => [a.groupId, a.groupName])).toEqual([
      [ids[0], "One"],
      [ids[1], "Two"]
    ])
    const second = await server.request("GET", `/portals/${fresh}/admissions?limit=2&cursor=${first.body.nextCursor}`)
    expect(second.body).toEqual({ admissions: [expect.objectContaining({ groupId: ids[2] })], nextCursor: null })
    expectError(await server.request("GET", `/portals/${portal}/admissions?cursor=${first.body.nextCursor}`), 400, "invalid_request")
    expectError(await server.request("GET", `/portals/${unknownId()}/admissions`), 404, "not_found")
    const theirPortal = await insertPortal(server, { name: "Hidden", org: "other" })
    expectError(await server.request("GET", `/portals/${theirPortal}/admissions`), 404, "not_found")
  })
})

describe("remove an admission", () => {
  it("removed true once, then false; the group stays; an unknown Portal is 404", async () => {
    const group = await newGroup("Leaving")
    await admit(portal, group)
    const response = await server.request("DELETE", `/portals/${portal}/admissions/${group}`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true, removed: true })
    expect(await admitted(portal)).not.toContain(group)
    expect((await server.request("GET", `/user-groups/${group}`)).status).toBe(200)
    expect((await server.request("DELETE", `/portals/${portal}/admissions/${group}`)).body).toEqual({ ok: true, removed: false })
    const stranger = unknownId()
    expect(expectError(await server.request("DELETE", `/portals/${portal}/admissions/${stranger}`), 404, "not_found")).toBe(
      `No user group '${stranger}' in this organization.`
    )
    expectError(await server.request("DELETE", `/portals/${unknownId()}/admissions/${group}`), 404, "not_found")
  })

  it("deleting a group removes its admissions", async () => {
    const group = await newGroup("Deleted later")
    await admit(portal, group)
    expect(await admitted(portal)).toContain(group)
    expect((await server.request("DELETE", `/user-groups/${group}`)).status).toBe(200)
    expect(await admitted(portal)).not.toContain(group)
    expect(await sql(server, (db) => db`SELECT * FROM portal_admissions WHERE group_id = ${group}`)).toEqual([])
  })
})

describe("gate and scopes", () => {
  it("answers 403 groups_disabled while the gate is off, writing nothing", async () => {
    const group = await newGroup("Gated")
    const before = await provisioningCounts(server)
    await setGroupsGate(server, false)
    try {
      expectError(await server.request("GET", `/portals/${portal}/admissions`), 403, "groups_disabled")
      expectError(await admit(portal, group), 403, "groups_disabled")
      expectError(await server.request("DELETE", `/portals/${portal}/admissions/${group}`), 403, "groups_disabled")
      expect((await server.request("GET", "/portals")).status).toBe(200)
    } finally {
      await setGroupsGate(server, true)
    }
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("needs end_users:read to list and end_users:write to admit or remove", async () => {
    const group = await newGroup("Scoped")
    const reader = await server.createKey({ name: "reader", scopes: ["end_users:read"] })
    const writer = await server.createKey({ name: "writer", scopes: ["end_users:write"] })
    const before = await provisioningCounts(server)
    expect((await server.request("GET", `/portals/${portal}/admissions`, { key: reader })).status).toBe(200)
    expectError(await admit(portal, group, reader), 403, "insufficient_scope")
    expectError(await server.request("DELETE", `/portals/${portal}/admissions/${group}`, { key: reader }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/portals/${portal}/admissions`, { key: writer }), 403, "insufficient_scope")
    expect(await provisioningCounts(server)).toEqual(before)
    expect((await admit(portal, group, writer)).status).toBe(201)
  })
})
