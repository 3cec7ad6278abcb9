/**
 * User groups through HTTP: create (with Idempotency-Key), list with member counts and paging, read
 * with roster and grants, PATCH, DELETE with its cascade, plan groups, the `groups` gate, scopes and
 * isolation between organizations. Refusals are shown to write nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, personalKey, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPlan, insertEndUser, insertPortal, provisioningCounts, setGroupsGate, subscribe } from "./support.js"

let server: TestServer
let other: string

beforeAll(async () => {
  server = await startTestServer()
  other = await server.createOrganization("other")
  await setGroupsGate(server, true, "other")
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const createGroup = async (name: string, description?: string | null, key?: string) => {
  const response = await server.request("POST", "/user-groups", {
    ...(key === undefined ? {} : { key }),
    body: description === undefined ? { name } : { name, description }
  })
  expect(response.status).toBe(201)
  return response.body.group as { id: string; name: string; description: string | null }
}

describe("POST /user-groups", () => {
  it("creates a group with no members, no plan and the given description", async () => {
    const at = new Date(server.clock.now()).toISOString()
    const response = await server.request("POST", "/user-groups", { body: { name: "  Beta testers ", description: "Early access." } })
    expect(response.status).toBe(201)
    expect(response.body).toEqual({
      group: {
        id: expect.any(String),
        name: "Beta testers",
        description: "Early access.",
        memberCount: 0,
        planId: null,
        createdAt: at,
        updatedAt: at
      }
    })
    const bare = await createGroup("No description")
    expect(bare.description).toBeNull()
  })

  it("refuses a missing or empty name and unknown properties, writing nothing", async () => {
    const before = await provisioningCounts(server)
    expectError(await server.request("POST", "/user-groups", { body: {} }), 400, "invalid_request")
    expectError(await server.request("POST", "/user-groups", { body: { name: "   " } }), 400, "invalid_request")
    const message = expectError(await server.request("POST", "/user-groups", { body: { name: "G", color: "red" } }), 400, "invalid_request")
    expect(message).toContain("color")
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("replays a keyed create and refuses the key with another body", async () => {
    const headers = { "idempotency-key": "group-create-1" }
    const first = await server.request("POST", "/user-groups", { body: { name: "Keyed" }, headers })
    const again = await server.request("POST", "/user-groups", { body: { name: "Keyed" }, headers })
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    const before = await provisioningCounts(server)
    expectError(await server.request("POST", "/user-groups", { body: { name: "Other" }, headers }), 409, "conflict")
    expect(await provisioningCounts(server)).toEqual(before)
  })
})

describe("GET /user-groups", () => {
  it("lists every group oldest first with member counts, plan groups marked, in pages", async () => {
    const fresh = await startTestServer()
    try {
      const names = ["A", "B", "C"]
      const ids: Array<string> = []
      for (const name of names) {
        fresh.clock.advance(1)
        ids.push((await fresh.request("POST", "/user-groups", { body: { name } })).body.group.id)
      }
      fresh.clock.advance(1)
      const plan = await createPlan(fresh, "Gold")
      const ada = await insertEndUser(fresh, { email: "ada@example.com" })
      const bob = await insertEndUser(fresh, { email: "bob@example.com" })
      const gone = await insertEndUser(fresh, { email: "gone@example.com", state: "deleted" })
      for (const person of [ada, bob]) {
        expect((await fresh.request("POST", `/user-groups/${ids[0]}/members`, { body: { endUserId: person, sendEmail: false } })).status).toBe(201)
      }
      // A membership from before the account was deleted: kept, never counted.
      await sql(fresh, (db) => db`INSERT INTO group_members (group_id, end_user_id, organization_id, created_at)
        SELECT ${ids[0]!}, id, organization_id, created_at FROM end_users WHERE id = ${gone}`)
      await subscribe(fresh, ada, plan.id)
      await subscribe(fresh, gone, plan.id)

      const first = await fresh.request("GET", "/user-groups?limit=2")
      expect(first.status).toBe(200)
      expect(first.body.groups.map((g: any) => [g.name, g.memberCount, g.planId])).toEqual([
        ["A", 2, null],
        ["B", 0, null]
      ])
      expect(first.body.nextCursor).toEqual(expect.any(String))
      const second = await fresh.request("GET", `/user-groups?limit=2&cursor=${first.body.nextCursor}`)
      expect(second.body.groups.map((g: any) => [g.name, g.memberCount, g.planId])).toEqual([
        ["C", 0, null],
        ["Gold", 1, plan.id]
      ])
      expect(second.body.nextCursor).toBeNull()
      const narrowed = await fresh.request("GET", "/user-groups?fields=id,memberCount&limit=1")
      expect(narrowed.body.groups).toEqual([{ id: ids[0], memberCount: 2 }])
      expectError(await fresh.request("GET", "/user-groups?fields=colour"), 400, "invalid_request")
      expectError(await fresh.request("GET", "/user-groups?cursor=forged"), 400, "invalid_request")
    } finally {
      await fresh.stop()
    }
  })
})

describe("GET /user-groups/{groupId}", () => {
  it("answers the group, its direct roster (deleted accounts left out) and its grants", async () => {
    const group = await createGroup("Roster")
    const ada = await insertEndUser(server, { email: "roster-ada@example.com" })
    const rev = await insertEndUser(server, { email: "roster-rev@example.com", state: "revoked" })
    const del = await insertEndUser(server, { email: "roster-del@example.com", state: "deleted" })
    await sql(server, (db) => db`INSERT INTO group_members (group_id, end_user_id, organization_id, created_at)
      SELECT ${group.id}, id, organization_id, '2026-01-0' || (CASE email WHEN 'roster-ada@example.com' THEN 1 WHEN 'roster-rev@example.com' THEN 2 ELSE 3 END) || 'T00:00:00.000Z'
      FROM end_users WHERE id IN (${ada}, ${rev}, ${del})`)
    const response = await server.request("GET", `/user-groups/${group.id}`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({
      group: expect.objectContaining({ id: group.id, name: "Roster", memberCount: 2, planId: null }),
      members: [
        { endUserId: ada, email: "roster-ada@example.com", state: "active", joinedAt: "2026-01-01T00:00:00.000Z", via: "direct" },
        { endUserId: rev, email: "roster-rev@example.com", state: "revoked", joinedAt: "2026-01-02T00:00:00.000Z", via: "direct" }
      ],
      grants: []
    })
  })

  it("answers a plan group's roster: the holders of its plan", async () => {
    const plan = await createPlan(server, "Silver")
    const holder = await insertEndUser(server, { email: "holder@example.com" })
    await subscribe(server, holder, plan.id)
    const response = await server.request("GET", `/user-groups/${plan.groupId}`)
    expect(response.status).toBe(200)
    expect(response.body.group).toEqual(expect.objectContaining({ id: plan.groupId, planId: plan.id, memberCount: 1 }))
    expect(response.body.members).toEqual([
      { endUserId: holder, email: "holder@example.com", state: "active", joinedAt: expect.any(String), via: "plan" }
    ])
  })

  it("is 404 for an unknown id, a malformed id and another organization's group", async () => {
    const theirs = (await server.request("POST", "/user-groups", { key: other, body: { name: "Theirs" } })).body.group.id
    expectError(await server.request("GET", `/user-groups/${unknownId()}`), 404, "not_found")
    expectError(await server.request("GET", "/user-groups/not-a-uuid"), 404, "not_found")
    expectError(await server.request("GET", `/user-groups/${theirs}`), 404, "not_found")
    expect((await server.request("GET", `/user-groups/${theirs}`, { key: other })).status).toBe(200)
    const mine = (await server.request("GET", "/user-groups?limit=200")).body.groups.map((g: any) => g.id)
    expect(mine).not.toContain(theirs)
  })
})

describe("PATCH /user-groups/{groupId}", () => {
  it("changes the given properties only; null clears the description", async () => {
    const group = await createGroup("Before", "Kept")
    server.clock.advance(5_000)
    expect((await server.request("PATCH", `/user-groups/${group.id}`, { body: { name: "After" } })).body).toEqual({ ok: true })
    let read = (await server.request("GET", `/user-groups/${group.id}`)).body.group
    expect([read.name, read.description]).toEqual(["After", "Kept"])
    expect(read.updatedAt).toBe(new Date(server.clock.now()).toISOString())
    expect(read.updatedAt > read.createdAt).toBe(true)
    expect((await server.request("PATCH", `/user-groups/${group.id}`, { body: { description: null } })).status).toBe(200)
    read = (await server.request("GET", `/user-groups/${group.id}`)).body.group
    expect([read.name, read.description]).toEqual(["After", null])
    expect((await server.request("PATCH", `/user-groups/${group.id}`, { body: { description: "New" } })).status).toBe(200)
    read = (await server.request("GET", `/user-groups/${group.id}`)).body.group
    expect([read.name, read.description]).toEqual(["After", "New"])
  })

  it("refuses an empty body, bad values, unknown ids and plan groups, changing nothing", async () => {
    const group = await createGroup("Fixed", "Same")
    const plan = await createPlan(server, "Bronze")
    const snapshot = async () => sql(server, (db) => db`SELECT id, name, description, updated_at FROM user_groups ORDER BY id`)
    const before = await snapshot()
    expectError(await server.request("PATCH", `/user-groups/${group.id}`, { body: {} }), 400, "invalid_request")
    expectError(await server.request("PATCH", `/user-groups/${group.id}`, { body: { name: "" } }), 400, "invalid_request")
    expectError(await server.request("PATCH", `/user-groups/${group.id}`, { body: { name: "X", planId: null } }), 400, "invalid_request")
    expectError(await server.request("PATCH", `/user-groups/${unknownId()}`, { body: { name: "X" } }), 404, "not_found")
    expectError(await server.request("PATCH", `/user-groups/${plan.groupId}`, { body: { name: "Renamed" } }), 409, "plan_group")
    expectError(await server.request("PATCH", `/user-groups/${plan.groupId}`, { body: { description: null } }), 409, "plan_group")
    expect(await snapshot()).toEqual(before)
  })
})

describe("DELETE /user-groups/{groupId}", () => {
  it("cascades memberships, grants and admissions away; accounts, plans and credits stay", async () => {
    const group = await createGroup("Doomed")
    const keep = await createGroup("Kept")
    const plan = await createPlan(server, "Platinum")
    const ada = await insertEndUser(server, { email: "doomed-ada@example.com" })
    await subscribe(server, ada, plan.id)
    const app = (await server.request("POST", "/apps", { body: { name: "Doomed app" } })).body.app.id
    const portal = await insertPortal(server, { name: "Doomed portal" })
    for (const g of [group.id, keep.id]) {
      expect((await server.request("POST", `/user-groups/${g}/members`, { body: { endUserId: ada, sendEmail: false } })).status).toBe(201)
      expect((await server.request("POST", `/user-groups/${g}/grants`, { body: { targetKind: "app", targetId: app } })).status).toBe(201)
      await sql(server, (db) => db`INSERT INTO portal_admissions (portal_id, group_id, organization_id, created_at)
        SELECT ${portal}, id, organization_id, '2026-01-01T00:00:00.000Z' FROM user_groups WHERE id = ${g}`)
    }
    const accountsBefore = await sql(server, (db) => db`SELECT * FROM end_users WHERE id = ${ada}`)
    const subscriptionsBefore = await sql(server, (db) => db`SELECT * FROM subscriptions WHERE end_user_id = ${ada}`)

    expect((await server.request("DELETE", `/user-groups/${group.id}`)).body).toEqual({ ok: true })
    expectError(await server.request("GET", `/user-groups/${group.id}`), 404, "not_found")
    for (const table of ["group_members", "group_grants", "portal_admissions"] as const) {
      expect(await sql(server, (db) => db`SELECT * FROM ${db(table)} WHERE group_id = ${group.id}`)).toEqual([])
      expect((await sql(server, (db) => db`SELECT * FROM ${db(table)} WHERE group_id = ${keep.id}`)).length).toBe(1)
    }
    expect(await sql(server, (db) => db`SELECT * FROM end_users WHERE id = ${ada}`)).toEqual(accountsBefore)
    expect(await sql(server, (db) => db`SELECT * FROM subscriptions WHERE end_user_id = ${ada}`)).toEqual(subscriptionsBefore)
    expect((await server.request("GET", `/user-groups/${plan.groupId}`)).body.group.memberCount).toBe(1)
    expectError(await server.request("DELETE", `/user-groups/${group.id}`), 404, "not_found")
  })

  it("refuses a plan group (409) and another organization's group (404), deleting nothing", async () => {
    const plan = await createPlan(server, "Locked")
    const theirs = (await server.request("POST", "/user-groups", { key: other, body: { name: "Not yours" } })).body.group.id
    const before = await provisioningCounts(server)
    expectError(await server.request("DELETE", `/user-groups/${plan.groupId}`), 409, "plan_group")
    expectError(await server.request("DELETE", `/user-groups/${theirs}`), 404, "not_found")
    expect(await provisioningCounts(server)).toEqual(before)
    expect((await server.request("GET", `/user-groups/${theirs}`, { key: other })).status).toBe(200)
  })
})

describe("gate and scopes", () => {
  it("answers 403 groups_disabled on every group endpoint while the gate is off, writing nothing", async () => {
    const group = await createGroup("Gated")
    const id = group.id
    const calls: Array<[string, string, unknown?]> = [
      ["POST", "/user-groups", { name: "No" }],
      ["GET", "/user-groups"],
      ["GET", `/user-groups/${id}`],
      ["PATCH", `/user-groups/${id}`, { name: "No" }],
      ["DELETE", `/user-groups/${id}`],
      ["POST", `/user-groups/${id}/members`, { email: "no@example.com" }],
      ["DELETE", `/user-groups/${id}/members/${unknownId()}`],
      ["POST", `/user-groups/${id}/grants`, { targetKind: "app", targetId: unknownId() }],
      ["DELETE", `/user-groups/${id}/grants/${unknownId()}`]
    ]
    const before = await provisioningCounts(server)
    await setGroupsGate(server, false)
    try {
      for (const [method, path, body] of calls) {
        expectError(await server.request(method, path, body === undefined ? {} : { body }), 403, "groups_disabled")
      }
    } finally {
      await setGroupsGate(server, true)
    }
    expect(await provisioningCounts(server)).toEqual(before)
    expect((await server.request("GET", `/user-groups/${id}`)).status).toBe(200)
  })

  it("needs end_users:read to read and end_users:write to change; personal keys need the admin role", async () => {
    const group = await createGroup("Scoped")
    const reader = await server.createKey({ name: "reader", scopes: ["end_users:read"] })
    const writer = await server.createKey({ name: "writer", scopes: ["end_users:write"] })
    const before = await provisioningCounts(server)
    expect((await server.request("GET", "/user-groups", { key: reader })).status).toBe(200)
    expect((await server.request("GET", `/user-groups/${group.id}`, { key: reader })).status).toBe(200)
    expectError(await server.request("POST", "/user-groups", { key: reader, body: { name: "No" } }), 403, "insufficient_scope")
    expectError(await server.request("PATCH", `/user-groups/${group.id}`, { key: reader, body: { name: "No" } }), 403, "insufficient_scope")
    expectError(await server.request("DELETE", `/user-groups/${group.id}`, { key: reader }), 403, "insufficient_scope")
    expectError(await server.request("POST", `/user-groups/${group.id}/members`, { key: reader, body: { email: "x@example.com" } }), 403, "insufficient_scope")
    expectError(await server.request("GET", "/user-groups", { key: writer }), 403, "insufficient_scope")
    const member = await personalKey(server, { email: "member@org.test", role: "member" })
    expectError(await server.request("GET", "/user-groups", { key: member }), 403, "insufficient_scope")
    expectError(await server.request("POST", "/user-groups", { key: member, body: { name: "No" } }), 403, "insufficient_scope")
    expect(await provisioningCounts(server)).toEqual(before)
    const adminKey = await personalKey(server, { email: "admin2@org.test", role: "admin" })
    expect((await server.request("POST", "/user-groups", { key: adminKey, body: { name: "By an admin" } })).status).toBe(201)
  })
})
