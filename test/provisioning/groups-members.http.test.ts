/**
 * Group membership through HTTP: every membership row of the "Group membership and grants" state
 * table, by end-user id and by email (pre-provisioning a pending identity), the invite in the outbox,
 * plan groups, revoked and deleted accounts, and isolation between organizations.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, organizationId, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPlan, insertEndUser, provisioningCounts } from "./support.js"

let server: TestServer
let other: string

beforeAll(async () => {
  server = await startTestServer()
  other = await server.createOrganization("other")
  await server.admin(
    Effect.flatMap(
      (await import("../../server/identity/service.js")).AccountsService,
      (a) => a.setOrganization("other", { enable: ["groups"] })
    )
  )
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const newGroup = async (name: string) => (await server.request("POST", "/user-groups", { body: { name } })).body.group.id as string
/** The outbox's emails to a recipient (compared case-insensitively), oldest first. */
const mail = (to: string) =>
  sql(server, (db) => db<any>`SELECT kind, recipient AS "to", organization_id AS "organizationId", subject, body, sent_at AS "sentAt"
    FROM outbox_emails WHERE lower(recipient) = ${to.toLowerCase()} ORDER BY created_at, id`)
const roster = async (groupId: string) => (await server.request("GET", `/user-groups/${groupId}`)).body.members as Array<any>

describe("add member", () => {
  it("not yet a member: 201 added true, on the roster at once, invited through the outbox", async () => {
    const group = await newGroup("Readers")
    const ada = await insertEndUser(server, { email: "Ada@Example.com" })
    const response = await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: ada } })
    expect(response.status).toBe(201)
    expect(response.body).toEqual({ ok: true, added: true, endUserId: ada })
    expect(await roster(group)).toEqual([
      { endUserId: ada, email: "Ada@Example.com", state: "active", joinedAt: new Date(server.clock.now()).toISOString(), via: "direct" }
    ])
    const emails = await mail("ada@example.com")
    expect(emails).toHaveLength(1)
    expect(emails[0]).toEqual(
      expect.objectContaining({ kind: "group_invite", to: "Ada@Example.com", organizationId: await organizationId(server), sentAt: null })
    )
    expect(emails[0]!.body).toContain("Readers")
  })

  it("already a member: 200 added false, nothing written, no second invite", async () => {
    const group = await newGroup("Twice")
    const bob = await insertEndUser(server, { email: "bob@example.com" })
    expect((await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: bob } })).status).toBe(201)
    const before = await provisioningCounts(server)
    const again = await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: bob } })
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ ok: true, added: false, endUserId: bob })
    const byEmail = await server.request("POST", `/user-groups/${group}/members`, { body: { email: "  BOB@example.com " } })
    expect(byEmail.status).toBe(200)
    expect(byEmail.body).toEqual({ ok: true, added: false, endUserId: bob })
    expect(await provisioningCounts(server)).toEqual(before)
    expect(await mail("bob@example.com")).toHaveLength(1)
  })

  it("sendEmail false: the member is added and no email is recorded", async () => {
    const group = await newGroup("Quiet")
    const cy = await insertEndUser(server, { email: "cy@example.com" })
    expect((await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: cy, sendEmail: false } })).status).toBe(201)
    expect(await mail("cy@example.com")).toEqual([])
    expect((await roster(group)).map((m) => m.endUserId)).toEqual([cy])
  })

  it("an email with no account pre-provisions one pending identity, keyed on the normalised email", async () => {
    const group = await newGroup("Invited")
    const second = await newGroup("Invited too")
    const response = await server.request("POST", `/user-groups/${group}/members`, { body: { email: "  New.Person@Example.COM " } })
    expect(response.status).toBe(201)
    const id = response.body.endUserId
    expect(response.body).toEqual({ ok: true, added: true, endUserId: expect.any(String) })
    const rows = await sql(server, (db) => db<any>`SELECT id, email, email_key, state, full_name FROM end_users WHERE email_key = 'new.person@example.com'`)
    expect(rows).toEqual([{ id, email: "New.Person@Example.COM", email_key: "new.person@example.com", state: "pending", full_name: null }])
    expect((await roster(group))[0]).toEqual(expect.objectContaining({ endUserId: id, state: "pending", via: "direct" }))
    const other = await server.request("POST", `/user-groups/${second}/members`, { body: { email: "new.person@example.com" } })
    expect(other.status).toBe(201)
    expect(other.body.endUserId).toBe(id)
    expect((await sql(server, (db) => db`SELECT id FROM end_users WHERE email_key = 'new.person@example.com'`)).length).toBe(1)
    expect(await mail("new.person@example.com")).toHaveLength(2)
  })

  it("the same new email added concurrently creates one account", async () => {
    const groups = await Promise.all(["C1", "C2", "C3", "C4"].map(newGroup))
    const answers = await Promise.all(
      groups.map((g) => server.request("POST", `/user-groups/${g}/members`, { body: { email: "race@example.com", sendEmail: false } }))
    )
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201])
    expect(new Set(answers.map((a) => a.body.endUserId)).size).toBe(1)
    expect((await sql(server, (db) => db`SELECT id FROM end_users WHERE email_key = 'race@example.com'`)).length).toBe(1)
  })

  it("a revoked account is added without an invite; a deleted one is 409 deleted_identity, nothing written", async () => {
    const group = await newGroup("Mixed")
    const revoked = await insertEndUser(server, { email: "revoked@example.com", state: "revoked" })
    await insertEndUser(server, { email: "deleted@example.com", state: "deleted" })
    const added = await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: revoked } })
    expect(added.status).toBe(201)
    expect(await mail("revoked@example.com")).toEqual([])
    expect((await roster(group)).map((m) => [m.endUserId, m.state])).toEqual([[revoked, "revoked"]])
    const deletedId = (await sql(server, (db) => db<{ id: string }>`SELECT id FROM end_users WHERE email_key = 'deleted@example.com'`))[0]!.id
    const before = await provisioningCounts(server)
    expectError(await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: deletedId } }), 409, "deleted_identity")
    expectError(await server.request("POST", `/user-groups/${group}/members`, { body: { email: "DELETED@example.com" } }), 409, "deleted_identity")
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("refuses bad bodies, unknown ids, plan groups and other organizations, writing nothing", async () => {
    const group = await newGroup("Strict")
    const plan = await createPlan(server, "Plan with group")
    const ada = await insertEndUser(server, { email: "strict@example.com" })
    const theirs = await insertEndUser(server, { email: "theirs@example.com", org: "other" })
    const theirGroup = (await server.request("POST", "/user-groups", { key: other, body: { name: "Theirs" } })).body.group.id
    const before = await provisioningCounts(server)
    const post = (groupId: string, body: unknown) => server.request("POST", `/user-groups/${groupId}/members`, { body })
    expectError(await post(group, {}), 400, "invalid_request")
    expectError(await post(group, { endUserId: ada, email: "strict@example.com" }), 400, "invalid_request")
    expectError(await post(group, { email: "not an email" }), 400, "invalid_request")
    expectError(await post(group, { endUserId: "nope" }), 400, "invalid_request")
    expectError(await post(group, { endUserId: ada, role: "x" }), 400, "invalid_request")
    expectError(await post(group, { endUserId: ada, sendEmail: "yes" }), 400, "invalid_request")
    expect(expectError(await post(group, { endUserId: unknownId() }), 404, "not_found")).toContain("endUserId")
    expectError(await post(group, { endUserId: theirs }), 404, "not_found")
    expectError(await post(unknownId(), { endUserId: ada }), 404, "not_found")
    expectError(await post(theirGroup, { endUserId: ada }), 404, "not_found")
    expectError(await post(plan.groupId, { endUserId: ada }), 422, "plan_group")
    expectError(await post(plan.groupId, { email: "planjoin@example.com" }), 422, "plan_group")
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("an email known in another organization makes a separate account here", async () => {
    const group = await newGroup("Separate")
    const theirs = await insertEndUser(server, { email: "shared@example.com", org: "other" })
    const response = await server.request("POST", `/user-groups/${group}/members`, { body: { email: "shared@example.com", sendEmail: false } })
    expect(response.status).toBe(201)
    expect(response.body.endUserId).not.toBe(theirs)
  })
})

describe("remove member", () => {
  it("a member: removed true, off the roster; the account and its plans untouched", async () => {
    const group = await newGroup("Leaving")
    const ada = await insertEndUser(server, { email: "leaving@example.com" })
    await server.request("POST", `/user-groups/${group}/members`, { body: { endUserId: ada, sendEmail: false } })
    const account = await sql(server, (db) => db`SELECT * FROM end_users WHERE id = ${ada}`)
    const response = await server.request("DELETE", `/user-groups/${group}/members/${ada}`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true, removed: true })
    expect(await roster(group)).toEqual([])
    expect(await sql(server, (db) => db`SELECT * FROM end_users WHERE id = ${ada}`)).toEqual(account)
  })

  it("not a member (or no such person): succeeds with removed false", async () => {
    const group = await newGroup("Never")
    const ada = await insertEndUser(server, { email: "never@example.com" })
    for (const id of [ada, unknownId(), "not-a-uuid"]) {
      const response = await server.request("DELETE", `/user-groups/${group}/members/${id}`)
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ ok: true, removed: false })
    }
  })

  it("refuses an unknown group (404) and a plan group (409), removing nothing", async () => {
    const plan = await createPlan(server, "Held")
    const ada = await insertEndUser(server, { email: "held@example.com" })
    const before = await provisioningCounts(server)
    expectError(await server.request("DELETE", `/user-groups/${unknownId()}/members/${ada}`), 404, "not_found")
    expectError(await server.request("DELETE", `/user-groups/${plan.groupId}/members/${ada}`), 409, "plan_group")
    expect(await provisioningCounts(server)).toEqual(before)
  })
})
