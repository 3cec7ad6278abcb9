/**
 * Operations on existing end-user accounts over HTTP: the listing (state shown, deleted never
 * listed, email filter, updatedSince, pages), the read with credit usage, revoke, delete, removing a
 * plan, bonus credits (clamped at zero), the deprecated grant removal, scopes and isolation.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createGroup, createPlan, createTarget, provisioningCounts, stateOf } from "./support.js"

let server: TestServer
let otherKey: string
let gold: { id: string }
let silver: { id: string }
let staff: string

beforeAll(async () => {
  server = await startTestServer()
  otherKey = await server.createOrganization("other")
  gold = await createPlan(server, "Gold", 500)
  silver = await createPlan(server, "Silver", 100)
  staff = await createGroup(server, "Staff")
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

let emails = 0
const freshEmail = () => `member${++emails}@example.com`
const provision = async (body: Record<string, unknown>, key?: string) => {
  const response = await server.request("POST", "/end-users", { body, ...(key ? { key } : {}) })
  expect([200, 201]).toContain(response.status)
  return response.body
}

describe("GET /end-users", () => {
  it("lists accounts oldest first with their state; deleted ones never; pages with a cursor bound to the filters", async () => {
    const org = await startTestServer()
    try {
      const made = []
      for (let i = 0; i < 4; i++) {
        org.clock.advance(1_000)
        made.push((await org.request("POST", "/end-users", { body: { email: `u${i}@example.com` } })).body.endUser)
      }
      org.clock.advance(1_000)
      await org.request("POST", `/end-users/${made[1].id}/revoke`)
      await org.request("DELETE", `/end-users/${made[2].id}`)
      const all = await org.request("GET", "/end-users")
      expect(all.body).toEqual({
        endUsers: [
          { ...made[0], state: "active", updatedAt: made[0].createdAt },
          { ...made[1], state: "revoked", updatedAt: expect.any(String) },
          { ...made[3], state: "active", updatedAt: made[3].createdAt }
        ],
        nextCursor: null
      })
      const first = await org.request("GET", "/end-users?limit=2")
      expect(first.body.endUsers.map((u: { id: string }) => u.id)).toEqual([made[0].id, made[1].id])
      const second = await org.request("GET", `/end-users?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`)
      expect(second.body).toEqual({ endUsers: [expect.objectContaining({ id: made[3].id })], nextCursor: null })
      expectError(await org.request("GET", `/end-users?limit=2&email=u0@example.com&cursor=${encodeURIComponent(first.body.nextCursor)}`), 400, "invalid_request")
      expect((await org.request("GET", "/end-users?email=%20U3@Example.COM%20")).body.endUsers.map((u: { id: string }) => u.id)).toEqual([made[3].id])
      expect((await org.request("GET", "/end-users?email=u2@example.com")).body.endUsers).toEqual([])
      const since = all.body.endUsers[1].updatedAt
      expect(since > made[3].createdAt).toBe(true)
      expect((await org.request("GET", `/end-users?updatedSince=${encodeURIComponent(since)}`)).body.endUsers.map((u: { id: string }) => u.id)).toEqual([made[1].id])
      expectError(await org.request("GET", "/end-users?updatedSince=yesterday"), 400, "invalid_request")
      expectError(await org.request("GET", "/end-users?state=active"), 400, "invalid_request")
    } finally {
      await org.stop()
    }
  })

  it("needs end_users:read; a key without it is 403", async () => {
    const key = await server.createKey({ name: "kb", scopes: ["knowledge:read"] })
    expectError(await server.request("GET", "/end-users", { key }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/end-users/${unknownId()}`, { key }), 403, "insufficient_scope")
  })
})

describe("GET /end-users/{id}", () => {
  it("answers identity, state, subscriptions with credit usage, direct groups and grant ids", async () => {
    const created = await provision({ email: freshEmail(), fullName: "Kim", tierPlanIds: [gold.id, silver.id], groupIds: [staff] })
    const id = created.endUser.id
    await sql(server, (db) => db`UPDATE subscriptions SET credits_used = 120 WHERE id = ${created.subscriptions[0].id}`)
    const read = await server.request("GET", `/end-users/${id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual({
      endUser: {
        ...created.endUser,
        state: "active",
        updatedAt: created.endUser.createdAt,
        subscriptions: expect.arrayContaining([{ ...created.subscriptions[0], creditsUsed: 120, creditsRemaining: 380 }, created.subscriptions[1]]),
        groupIds: [staff],
        grantIds: []
      }
    })
    expectError(await server.request("GET", `/end-users/${unknownId()}`), 404, "not_found")
    expectError(await server.request("GET", "/end-users/not-a-uuid"), 404, "not_found")
  })
})

describe("revoke and delete", () => {
  it("revoke is idempotent and keeps plans, groups and credits", async () => {
    const created = await provision({ email: freshEmail(), tierPlanIds: [gold.id], groupIds: [staff] })
    const id = created.endUser.id
    for (let i = 0; i < 2; i++) expect((await server.request("POST", `/end-users/${id}/revoke`)).body).toEqual({ ok: true, revoked: true })
    const read = await server.request("GET", `/end-users/${id}`)
    expect(read.body.endUser).toMatchObject({ state: "revoked", groupIds: [staff], subscriptions: created.subscriptions })
    const reader = await server.createKey({ name: "reader", scopes: ["end_users:read"] })
    expectError(await server.request("POST", `/end-users/${id}/revoke`, { key: reader }), 403, "insufficient_scope")
    expectError(await server.request("POST", `/end-users/${unknownId()}/revoke`), 404, "not_found")
  })

  it("delete removes subscriptions, memberships and grants, keeps the identity as deleted; a second delete is 404", async () => {
    const email = freshEmail()
    const created = await provision({ email, tierPlanIds: [gold.id, silver.id], groupIds: [staff], sendEmail: true })
    const id = created.endUser.id
    const before = await provisioningCounts(server)
    expect((await server.request("DELETE", `/end-users/${id}`)).body).toEqual({ ok: true })
    expect(await provisioningCounts(server)).toEqual({ ...before, subscriptions: before.subscriptions - 2, group_members: before.group_members - 1 })
    expect(await stateOf(server, email)).toBe("deleted")
    expectError(await server.request("GET", `/end-users/${id}`), 404, "not_found")
    expectError(await server.request("DELETE", `/end-users/${id}`), 404, "not_found")
    expectError(await server.request("POST", `/end-users/${id}/revoke`), 404, "not_found")
  })
})

describe("subscriptions", () => {
  it("removing a plan deletes its subscription and pool, leaving the others; unknown or someone else's subscription is 404", async () => {
    const created = await provision({ email: freshEmail(), tierPlanIds: [gold.id, silver.id] })
    const [goldSub, silverSub] = created.subscriptions
    const someoneElse = await provision({ email: freshEmail(), tierPlanIds: [gold.id] })
    expectError(await server.request("DELETE", `/end-users/${created.endUser.id}/subscriptions/${someoneElse.subscriptions[0].id}`), 404, "not_found")
    expect((await server.request("DELETE", `/end-users/${created.endUser.id}/subscriptions/${goldSub.id}`)).body).toEqual({ ok: true })
    expect(await sql(server, (db) => db`SELECT id FROM subscriptions WHERE id = ${goldSub.id}`)).toEqual([])
    expect((await server.request("GET", `/end-users/${created.endUser.id}`)).body.endUser.subscriptions).toEqual([silverSub])
    expectError(await server.request("DELETE", `/end-users/${created.endUser.id}/subscriptions/${goldSub.id}`), 404, "not_found")
    const back = await provision({ email: created.endUser.email, tierPlanIds: [gold.id] })
    expect(back.subscriptions.find((s: { tierPlanId: string }) => s.tierPlanId === gold.id).id).not.toBe(goldSub.id)
  })

  it("bonus credits add to the pool; a negative amount takes bonus credits away, clamped at zero; the reason is recorded", async () => {
    const created = await provision({ email: freshEmail(), tierPlanIds: [silver.id] })
    const path = `/end-users/${created.endUser.id}/subscriptions/${created.subscriptions[0].id}/bonus-credits`
    const added = await server.request("POST", path, { body: { amount: 50, reason: "apology for downtime" } })
    expect(added.status).toBe(200)
    expect(added.body).toEqual({ ok: true, applied: 50, subscription: { ...created.subscriptions[0], bonusCredits: 50, creditsRemaining: 150 } })
    const removed = await server.request("POST", path, { body: { amount: -80 } })
    expect(removed.body).toEqual({ ok: true, applied: -50, subscription: { ...created.subscriptions[0], bonusCredits: 0, creditsRemaining: 100 } })
    expect(
      await sql(server, (db) => db<{ amount: number; applied: number; reason: string | null }>`SELECT amount, applied, reason FROM bonus_credit_adjustments
        WHERE subscription_id = ${created.subscriptions[0].id} ORDER BY created_at`)
    ).toEqual([
      { amount: 50, applied: 50, reason: "apology for downtime" },
      { amount: -80, applied: -50, reason: null }
    ])
    expectError(await server.request("POST", path, { body: { amount: 0 } }), 400, "invalid_request")
    expectError(await server.request("POST", path, { body: { amount: 1.5 } }), 400, "invalid_request")
    expectError(await server.request("POST", path, { body: { amount: 5, note: "x" } }), 400, "invalid_request")
    expectError(await server.request("POST", `/end-users/${created.endUser.id}/subscriptions/${unknownId()}/bonus-credits`, { body: { amount: 5 } }), 404, "not_found")
    expectError(await server.request("POST", path, { key: otherKey, body: { amount: 5 } }), 404, "not_found")
  })
})

describe("DELETE /end-users/{id}/grants/{grantId} (deprecated)", () => {
  it("removes a per-user grant with a Deprecation header where grants are used; refused with grants_unsupported on group-based access", async () => {
    const legacyKey = await server.createOrganization("legacy")
    const app = await createTarget(server, "apps", "legacy")
    const created = await provision({ email: freshEmail(), grants: [{ targetKind: "app", targetId: app }] }, legacyKey)
    const grantId = (await server.request("GET", `/end-users/${created.endUser.id}`, { key: legacyKey })).body.endUser.grantIds[0]
    const path = `/end-users/${created.endUser.id}/grants/${grantId}`
    const stranger = await server.createOrganization("stranger")
    expectError(await server.request("DELETE", path, { key: stranger }), 404, "not_found")
    const removed = await server.request("DELETE", path, { key: legacyKey })
    expect(removed.status).toBe(200)
    expect(removed.body).toEqual({ ok: true })
    expect(removed.headers.get("deprecation")).toBe("@1767225600")
    expectError(await server.request("DELETE", path, { key: legacyKey }), 404, "not_found")
    const mine = await provision({ email: freshEmail() })
    const grouped = await server.request("DELETE", `/end-users/${mine.endUser.id}/grants/${unknownId()}`)
    expectError(grouped, 400, "grants_unsupported")
    expect(grouped.headers.get("deprecation")).toBe("@1767225600")
  })
})
