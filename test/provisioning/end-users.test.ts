/**
 * `POST /end-users` over HTTP: the End-user account state table row by row, plans as separate
 * subscriptions with their own pools, groups joined, `sendEmail`, every refusal code with proof that
 * nothing was written, one account for one email under concurrency, idempotency, scope and isolation.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { EndUserService } from "../../server/provisioning/end-users/service.js"
import { expectError, organizationId, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { svc, svcJson } from "../cli/helpers.js"
import { archivePlan, createGroup, createPlan, createTarget, provisioningCounts, stateOf } from "./support.js"

let server: TestServer
let otherKey: string
let gold: { id: string; groupId: string }
let silver: { id: string; groupId: string }
let staff: string
let beta: string

beforeAll(async () => {
  server = await startTestServer()
  otherKey = await server.createOrganization("other")
  gold = await createPlan(server, "Gold", 500)
  silver = await createPlan(server, "Silver", 100)
  staff = await createGroup(server, "Staff")
  beta = await createGroup(server, "Beta testers")
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

let emails = 0
const freshEmail = () => `person${++emails}@example.com`
const provision = (body: Record<string, unknown>, options: { key?: string; headers?: Record<string, string> } = {}) =>
  server.request("POST", "/end-users", { body, ...options })

describe("the End-user account state table", () => {
  it("(none) -> existing: 201, created true, each plan its own subscription and pool, groups joined, nothing emailed", async () => {
    const email = freshEmail()
    const before = await provisioningCounts(server)
    const now = new Date(server.clock.now()).toISOString()
    const response = await provision({ email: `  ${email}  `, fullName: "Ada Lovelace", tierPlanIds: [gold.id, silver.id], groupIds: [staff, beta] })
    expect(response.status).toBe(201)
    expect(response.body).toEqual({
      endUser: { id: expect.any(String), email, fullName: "Ada Lovelace", createdAt: now },
      created: true,
      subscriptions: [
        { id: expect.any(String), tierPlanId: gold.id, tierPlanName: "Gold", status: "active", creditAllowance: 500, creditsUsed: 0, bonusCredits: 0, creditsRemaining: 500, creditsResetAt: "2026-12-21T12:01:00.000Z" },
        { id: expect.any(String), tierPlanId: silver.id, tierPlanName: "Silver", status: "active", creditAllowance: 100, creditsUsed: 0, bonusCredits: 0, creditsRemaining: 100, creditsResetAt: "2026-12-21T12:01:00.000Z" }
      ],
      groupsJoined: [staff, beta],
      grantsCreated: 0
    })
    expect(response.body.subscriptions[0].id).not.toBe(response.body.subscriptions[1].id)
    const after = await provisioningCounts(server)
    expect(after).toEqual({ ...before, end_users: before.end_users + 1, subscriptions: before.subscriptions + 2, group_members: before.group_members + 2 })
  })

  it("existing -> existing: 200 updated in place; the email is matched case-insensitively; plans and groups are added, never removed", async () => {
    const email = freshEmail()
    const first = await provision({ email, tierPlanIds: [gold.id], groupIds: [staff] })
    server.clock.advance(1_000)
    const again = await provision({ email: email.toUpperCase(), fullName: "Grace Hopper", tierPlanIds: [silver.id], groupIds: [beta] })
    expect(again.status).toBe(200)
    expect(again.body.created).toBe(false)
    expect(again.body.endUser).toEqual({ ...first.body.endUser, fullName: "Grace Hopper" })
    expect(again.body.subscriptions.map((s: { tierPlanName: string }) => s.tierPlanName)).toEqual(["Gold", "Silver"])
    expect(again.body.subscriptions[0]).toEqual(first.body.subscriptions[0])
    expect(again.body.groupsJoined).toEqual([beta])
    const read = await server.request("GET", `/end-users/${first.body.endUser.id}`)
    expect(read.body.endUser.groupIds.sort()).toEqual([staff, beta].sort())
    expect(read.body.endUser.fullName).toBe("Grace Hopper")
    const bare = await provision({ email })
    expect(bare.status).toBe(200)
    expect(bare.body.endUser.fullName).toBe("Grace Hopper")
    expect(bare.body.subscriptions).toHaveLength(2)
    expect(await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM end_users WHERE email_key = ${email}`)).toEqual([{ n: 1 }])
  })

  it("existing -> revoked -> existing: a re-POST restores a revoked identity (200), keeping its plans", async () => {
    const email = freshEmail()
    const created = await provision({ email, tierPlanIds: [gold.id] })
    const id = created.body.endUser.id
    expect((await server.request("POST", `/end-users/${id}/revoke`)).body).toEqual({ ok: true, revoked: true })
    expect(await stateOf(server, email)).toBe("revoked")
    const restored = await provision({ email })
    expect(restored.status).toBe(200)
    expect(restored.body).toMatchObject({ created: false, endUser: { id } })
    expect(restored.body.subscriptions).toEqual(created.body.subscriptions)
    expect((await server.request("GET", `/end-users/${id}`)).body.endUser.state).toBe("active")
  })

  it("deleted -> deleted: 409 deleted_identity, forever, whatever the case of the email; nothing written", async () => {
    const email = freshEmail()
    const id = (await provision({ email, tierPlanIds: [gold.id] })).body.endUser.id
    expect((await server.request("DELETE", `/end-users/${id}`)).body).toEqual({ ok: true })
    const before = await provisioningCounts(server)
    expectError(await provision({ email: email.toUpperCase(), tierPlanIds: [silver.id], groupIds: [staff], sendEmail: true }), 409, "deleted_identity")
    server.clock.advance(400 * 24 * 3600_000)
    expectError(await provision({ email }), 409, "deleted_identity")
    expect(await provisioningCounts(server)).toEqual(before)
    expect(await stateOf(server, email)).toBe("deleted")
    expectError(await server.request("GET", `/end-users/${id}`), 404, "not_found")
  })

  it("pending -> existing: an identity pre-provisioned by a group invite is taken over (201, same id, membership kept)", async () => {
    const email = freshEmail()
    const orgId = await organizationId(server)
    const id = unknownId()
    const at = new Date(server.clock.now()).toISOString()
    await sql(server, (db) => db`INSERT INTO end_users (id, organization_id, email, email_key, full_name, state, created_at, updated_at)
      VALUES (${id}, ${orgId}, ${email}, ${email}, NULL, 'pending', ${at}, ${at})`)
    await sql(server, (db) => db`INSERT INTO group_members (group_id, end_user_id, organization_id, created_at) VALUES (${staff}, ${id}, ${orgId}, ${at})`)
    server.clock.advance(1_000)
    const taken = await provision({ email, fullName: "Pat", tierPlanIds: [silver.id] })
    expect(taken.status).toBe(201)
    expect(taken.body).toMatchObject({ created: true, endUser: { id, email, fullName: "Pat", createdAt: at } })
    expect(taken.body.subscriptions).toHaveLength(1)
    const read = await server.request("GET", `/end-users/${id}`)
    expect(read.body.endUser).toMatchObject({ state: "active", groupIds: [staff] })
  })
})

describe("sendEmail", () => {
  it("emails nothing by default or when false, and records one welcome email in the outbox when true", async () => {
    const email = freshEmail()
    await provision({ email })
    await provision({ email, sendEmail: false })
    const outbox = () => sql(server, (db) => db<{ kind: string; subject: string; body: string }>`SELECT kind, subject, body FROM outbox_emails WHERE recipient = ${email}`)
    expect(await outbox()).toEqual([])
    await provision({ email, fullName: "Lin", sendEmail: true })
    const sent = await outbox()
    expect(sent).toEqual([{ kind: "end_user_welcome", subject: expect.stringContaining("account"), body: expect.stringContaining("Hello Lin") }])
    expect(sent[0]!.body).toContain(email)
  })
})

describe("validation before any write", () => {
  const refusedWithoutWrites = async (body: Record<string, unknown>, status: number, code: string, key?: string) => {
    const before = await provisioningCounts(server)
    const message = expectError(await provision(body, key ? { key } : {}), status, code)
    expect(await provisioningCounts(server)).toEqual(before)
    return message
  }

  it("refuses a missing or malformed email and unknown properties (400)", async () => {
    expect(await refusedWithoutWrites({ fullName: "No email" }, 400, "invalid_request")).toMatch(/email/)
    expect(await refusedWithoutWrites({ email: "not-an-email" }, 400, "invalid_request")).toMatch(/email/)
    expect(await refusedWithoutWrites({ email: freshEmail(), nickname: "x" }, 400, "invalid_request")).toMatch(/nickname/)
    expect(await refusedWithoutWrites({ email: freshEmail(), tierPlanIds: ["gold"] }, 400, "invalid_request")).toMatch(/tierPlanIds/)
  })

  it("tier_not_found (422) for unknown, archived and other organizations' plans, naming each; no partial account, new or existing", async () => {
    const old = await createPlan(server, "Old", 1)
    await archivePlan(server, old.id)
    const theirs = await createPlan(server, "Theirs", 1, "other")
    const ghost = unknownId()
    const message = await refusedWithoutWrites(
      { email: freshEmail(), tierPlanIds: [gold.id, old.id, theirs.id, ghost], groupIds: [staff], sendEmail: true },
      422,
      "tier_not_found"
    )
    for (const id of [old.id, theirs.id, ghost]) expect(message).toContain(id)
    expect(message).not.toContain(gold.id)
    const email = freshEmail()
    const existing = await provision({ email, tierPlanIds: [silver.id] })
    await refusedWithoutWrites({ email, fullName: "Changed", tierPlanIds: [gold.id, old.id], groupIds: [beta] }, 422, "tier_not_found")
    const read = await server.request("GET", `/end-users/${existing.body.endUser.id}`)
    expect(read.body.endUser).toMatchObject({ fullName: null, groupIds: [] })
    expect(read.body.endUser.subscriptions.map((s: { tierPlanId: string }) => s.tierPlanId)).toEqual([silver.id])
  })

  it("group_not_found (422) for unknown and other organizations' groups, plan_group (422) for a plan's group", async () => {
    const theirs = await createGroup(server, "Theirs", "other")
    const ghost = unknownId()
    const message = await refusedWithoutWrites({ email: freshEmail(), tierPlanIds: [gold.id], groupIds: [staff, theirs, ghost] }, 422, "group_not_found")
    expect(message).toContain(theirs)
    expect(message).toContain(ghost)
    expect(await refusedWithoutWrites({ email: freshEmail(), tierPlanIds: [gold.id], groupIds: [staff, silver.groupId] }, 422, "plan_group")).toContain(
      silver.groupId
    )
  })

  it("grants_unsupported (400) on group-based access, with the Deprecation header; nothing written", async () => {
    const app = await createTarget(server, "apps")
    const before = await provisioningCounts(server)
    const response = await provision({ email: freshEmail(), tierPlanIds: [gold.id], grants: [{ targetKind: "app", targetId: app }] })
    expectError(response, 400, "grants_unsupported")
    expect(response.headers.get("deprecation")).toBe("@1767225600")
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("live_paid_subscription (409) when a requested plan is held with a payment processor; other plans still provision", async () => {
    const email = freshEmail()
    const created = await provision({ email, tierPlanIds: [gold.id] })
    const orgId = await organizationId(server)
    await server.admin(Effect.flatMap(EndUserService, (s) => s.setPaid(orgId, created.body.subscriptions[0].id, true)))
    await refusedWithoutWrites({ email, tierPlanIds: [silver.id, gold.id], groupIds: [staff] }, 409, "live_paid_subscription")
    const other = await provision({ email, tierPlanIds: [silver.id] })
    expect(other.status).toBe(200)
    expect(other.body.subscriptions.map((s: { status: string }) => s.status)).toEqual(["paid", "active"])
  })

  it("svc subscriptions set-status marks a subscription paid (then live_paid_subscription) and active again", async () => {
    const email = freshEmail()
    const created = await provision({ email, tierPlanIds: [silver.id] })
    const id = created.body.subscriptions[0].id
    expect(await svcJson(["subscriptions", "set-status", "--org", "default", id, "--status", "paid", "--json"], server.dataDir)).toEqual({
      subscription: { id, status: "paid" }
    })
    expectError(await provision({ email, tierPlanIds: [silver.id] }), 409, "live_paid_subscription")
    expect((await svc(["subscriptions", "set-status", "--org", "other", id, "--status", "active"], server.dataDir)).code).toBe(1)
    expect((await svc(["subscriptions", "set-status", "--org", "default", id, "--status", "free"], server.dataDir)).code).toBe(1)
    const human = await svc(["subscriptions", "set-status", "--org", "default", id, "--status", "active"], server.dataDir)
    expect(human.stdout).toContain(`Subscription ${id} is active`)
    expect((await provision({ email, tierPlanIds: [silver.id] })).status).toBe(200)
  })

  it("needs end_users:write (a read key is 403, nothing written)", async () => {
    const reader = await server.createKey({ name: "reader", scopes: ["end_users:read"] })
    await refusedWithoutWrites({ email: freshEmail() }, 403, "insufficient_scope", reader)
  })
})

describe("per-user grants (deprecated) in an organization without groups", () => {
  let legacyKey: string
  beforeAll(async () => {
    legacyKey = await server.createOrganization("legacy")
  })

  it("creates grants to an App, a Flow, an Agent and a Suite, counts only new ones, and marks the answer deprecated", async () => {
    const [app, flow, agent, suite] = await Promise.all([
      createTarget(server, "apps", "legacy"),
      createTarget(server, "flows", "legacy"),
      createTarget(server, "agents", "legacy"),
      createTarget(server, "suites", "legacy")
    ])
    const grants = [
      { targetKind: "app", targetId: app, deploymentId: "dep-1" },
      { targetKind: "app", targetId: flow },
      { targetKind: "app", targetId: agent },
      { targetKind: "suite", targetId: suite }
    ]
    const email = freshEmail()
    const first = await provision({ email, grants }, { key: legacyKey })
    expect(first.status).toBe(201)
    expect(first.body.grantsCreated).toBe(4)
    expect(first.headers.get("deprecation")).toBe("@1767225600")
    const again = await provision({ email, grants }, { key: legacyKey })
    expect(again.body.grantsCreated).toBe(0)
    const read = await server.request("GET", `/end-users/${first.body.endUser.id}`, { key: legacyKey })
    expect(read.body.endUser.grantIds).toHaveLength(4)
    expect((await provision({ email }, { key: legacyKey })).headers.get("deprecation")).toBeNull()
  })

  it("grant_target_not_found (422) for unknown targets, other organizations' targets and a Suite named as an App; nothing written", async () => {
    const mine = await createTarget(server, "suites", "legacy")
    const theirs = await createTarget(server, "apps", "default")
    const before = await provisioningCounts(server)
    const response = await provision(
      { email: freshEmail(), grants: [{ targetKind: "app", targetId: theirs }, { targetKind: "app", targetId: mine }, { targetKind: "suite", targetId: mine }] },
      { key: legacyKey }
    )
    const message = expectError(response, 422, "grant_target_not_found")
    expect(message).toMatch(/grants\[0\].*grants\[1\]/)
    expect(message).not.toMatch(/grants\[2\]/)
    expect(await provisioningCounts(server)).toEqual(before)
  })
})

describe("one account per email", () => {
  it("20 concurrent POSTs of one email (in varying case, no Idempotency-Key) create exactly one account: one 201, nineteen 200", async () => {
    const email = freshEmail()
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => provision({ email: i % 2 === 0 ? email : email.toUpperCase(), tierPlanIds: [gold.id], groupIds: [staff] }))
    )
    const statuses = responses.map((r) => r.status)
    expect({ created: statuses.filter((s) => s === 201).length, updated: statuses.filter((s) => s === 200).length }).toEqual({ created: 1, updated: 19 })
    expect(new Set(responses.map((r) => r.body.endUser.id)).size).toBe(1)
    expect(await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM end_users WHERE email_key = ${email}`)).toEqual([{ n: 1 }])
    const id = responses[0]!.body.endUser.id
    expect(await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM subscriptions WHERE end_user_id = ${id}`)).toEqual([{ n: 1 }])
  })

  it("concurrent requests committed together keep their own outcomes: a refusal rolls back only its own work", async () => {
    const before = await provisioningCounts(server)
    const bodies = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0 ? { email: freshEmail(), tierPlanIds: [gold.id], groupIds: [staff] } : { email: freshEmail(), tierPlanIds: [gold.id, unknownId()], groupIds: [staff] }
    )
    const responses = await Promise.all(bodies.map((body) => provision(body)))
    expect(responses.map((r) => r.status)).toEqual(bodies.map((_, i) => (i % 2 === 0 ? 201 : 422)))
    expect(await provisioningCounts(server)).toEqual({
      ...before,
      end_users: before.end_users + 10,
      subscriptions: before.subscriptions + 10,
      group_members: before.group_members + 10
    })
  })

  it("replays an Idempotency-Key (Idempotent-Replayed) and refuses it with another body (409 conflict)", async () => {
    const email = freshEmail()
    const headers = { "idempotency-key": `k-${email}` }
    const first = await provision({ email, tierPlanIds: [gold.id] }, { headers })
    expect(first.status).toBe(201)
    const replay = await provision({ email, tierPlanIds: [gold.id] }, { headers })
    expect(replay.status).toBe(201)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body).toEqual(first.body)
    const before = await provisioningCounts(server)
    expectError(await provision({ email, tierPlanIds: [silver.id] }, { headers }), 409, "conflict")
    expect(await provisioningCounts(server)).toEqual(before)
    const repeat = await provision({ email }, { headers: { "idempotency-key": `k2-${email}` } })
    expect(repeat.status).toBe(200)
  })
})

describe("organizations are isolated", () => {
  it("the same email is a separate account in each organization; another organization's end user is 404 everywhere", async () => {
    const email = freshEmail()
    const mine = await provision({ email })
    const theirs = await provision({ email }, { key: otherKey })
    expect(theirs.status).toBe(201)
    expect(theirs.body.endUser.id).not.toBe(mine.body.endUser.id)
    const id = theirs.body.endUser.id
    expectError(await server.request("GET", `/end-users/${id}`), 404, "not_found")
    expectError(await server.request("POST", `/end-users/${id}/revoke`), 404, "not_found")
    expectError(await server.request("DELETE", `/end-users/${id}`), 404, "not_found")
    expect((await server.request("GET", `/end-users?email=${encodeURIComponent(email)}`)).body.endUsers.map((u: { id: string }) => u.id)).toEqual([
      mine.body.endUser.id
    ])
    expect((await server.request("GET", `/end-users/${mine.body.endUser.id}`, { key: otherKey })).status).toBe(404)
  })
})
