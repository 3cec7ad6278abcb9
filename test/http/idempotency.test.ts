/**
 * `Idempotency-Key` on `POST /knowledgebases`: replays within 24 hours, conflicts on a different
 * body, scope (organization and address), expiry, stored errors, server faults, and a burst of
 * identical concurrent requests.
 */
import { createHash } from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import {
  countKnowledgebases,
  expectError,
  insertKnowledgebases,
  listAllKnowledgebases,
  organizationId,
  setPlan,
  sql
} from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())
// Each test starts with a fresh rate-limit window for the keys it uses.
beforeEach(() => server.clock.advance(60_000))

const day = 24 * 60 * 60_000

const post = (idempotencyKey: string, body: unknown, key?: string) =>
  server.request("POST", "/knowledgebases", {
    body,
    headers: { "idempotency-key": idempotencyKey },
    ...(key === undefined ? {} : { key })
  })

const namedCount = async (name: string, key?: string) =>
  (await listAllKnowledgebases(server, key)).filter((kb) => kb.name === name).length

describe("replay", () => {
  it("returns the first status and body byte for byte, marked Idempotent-Replayed, and creates once", async () => {
    const first = await post("replay-1", { name: "Replayed", description: "Once" })
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()

    const second = await post("replay-1", { name: "Replayed", description: "Once" })
    expect(second.status).toBe(201)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.headers.get("content-type")).toMatch(/^application\/json/)
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"))

    server.clock.advance(60 * 60_000)
    const third = await post("replay-1", { name: "Replayed", description: "Once" })
    expect(third.text).toBe(first.text)
    expect(third.headers.get("idempotent-replayed")).toBe("true")

    expect(await namedCount("Replayed")).toBe(1)
  })

  it("the same JSON written differently is the same body", async () => {
    const first = await post("formatting", '{"name":"Formatted","description":"d"}')
    expect(first.status).toBe(201)
    const second = await post("formatting", '{\n  "description": "d",\n  "name": "Formatted"\n}')
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.text).toBe(first.text)
    expect(await namedCount("Formatted")).toBe(1)
  })

  it("is scoped to the organization, not to the API key: another key of the same organization replays", async () => {
    const first = await post("shared-in-org", { name: "Org scoped" })
    const otherKey = await server.createKey({ name: "second key", scopes: "all" })
    const second = await post("shared-in-org", { name: "Org scoped" }, otherKey)
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.text).toBe(first.text)
    expect(await namedCount("Org scoped")).toBe(1)
  })

  it("a request without a key is never replayed", async () => {
    const a = await server.request("POST", "/knowledgebases", { body: { name: "No key" } })
    const b = await server.request("POST", "/knowledgebases", { body: { name: "No key" } })
    expect([a.status, b.status]).toEqual([201, 201])
    expect(a.body.knowledgebase.id).not.toBe(b.body.knowledgebase.id)
    expect(b.headers.get("idempotent-replayed")).toBeNull()
  })
})

describe("conflict", () => {
  it("the same key with a different body is 409 conflict, writes nothing, and keeps the first response", async () => {
    const first = await post("conflict-1", { name: "Original" })
    expect(first.status).toBe(201)
    const before = await countKnowledgebases(server)

    for (const body of [{ name: "Different" }, { name: "Original", description: "now with one" }]) {
      const conflict = await post("conflict-1", body)
      expectError(conflict, 409, "conflict")
      expect(conflict.headers.get("idempotent-replayed")).toBeNull()
    }
    expect(await countKnowledgebases(server)).toBe(before)
    expect(await namedCount("Different")).toBe(0)

    const replay = await post("conflict-1", { name: "Original" })
    expect(replay.text).toBe(first.text)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
  })
})

describe("the key itself", () => {
  it("a key of 65 characters is 400 naming the header, and nothing is written", async () => {
    const before = await countKnowledgebases(server)
    const response = await post("k".repeat(65), { name: "Long key" })
    expect(expectError(response, 400, "invalid_request")).toMatch(/idempotency-key/i)
    expect(await countKnowledgebases(server)).toBe(before)
  })

  it("a key of 64 characters is accepted and replayed", async () => {
    const key = "k".repeat(64)
    const first = await post(key, { name: "Longest key" })
    expect(first.status).toBe(201)
    const second = await post(key, { name: "Longest key" })
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.text).toBe(first.text)
  })

  it("a request refused by validation does not use up the key", async () => {
    expectError(await post("invalid-first", { name: "" }), 400, "invalid_request")
    const valid = await post("invalid-first", { name: "Valid second" })
    expect(valid.status).toBe(201)
    expect(valid.headers.get("idempotent-replayed")).toBeNull()
  })
})

describe("scope: organization and address", () => {
  it("the same key in another organization is independent", async () => {
    const otherOrg = await server.createOrganization("other-org", "pro")
    const mine = await post("cross-org", { name: "Cross" })
    const theirs = await post("cross-org", { name: "Cross" }, otherOrg)
    expect([mine.status, theirs.status]).toEqual([201, 201])
    expect(theirs.headers.get("idempotent-replayed")).toBeNull()
    expect(theirs.body.knowledgebase.id).not.toBe(mine.body.knowledgebase.id)
    // A different body in the other organization is not a conflict either.
    const differentBody = await post("cross-org-2", { name: "Mine" })
    const theirsDifferent = await post("cross-org-2", { name: "Theirs" }, otherOrg)
    expect([differentBody.status, theirsDifferent.status]).toEqual([201, 201])
    expect(await namedCount("Cross", otherOrg)).toBe(1)
    expect(await namedCount("Cross")).toBe(1)
  })
})

describe("expiry after 24 hours", () => {
  it("replays until 24 hours have passed, then runs again with a new id", async () => {
    const first = await post("expiring", { name: "Expiring" })
    expect(first.status).toBe(201)

    server.clock.advance(day - 1_000)
    const stillReplayed = await post("expiring", { name: "Expiring" })
    expect(stillReplayed.headers.get("idempotent-replayed")).toBe("true")
    expect(stillReplayed.text).toBe(first.text)

    server.clock.advance(1_000)
    const again = await post("expiring", { name: "Expiring" })
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBeNull()
    expect(again.body.knowledgebase.id).not.toBe(first.body.knowledgebase.id)
    expect(await namedCount("Expiring")).toBe(2)

    const replayOfNew = await post("expiring", { name: "Expiring" })
    expect(replayOfNew.headers.get("idempotent-replayed")).toBe("true")
    expect(replayOfNew.text).toBe(again.text)
  })

  it("after expiry a different body is a new request, not a conflict", async () => {
    expect((await post("expiring-2", { name: "Before" })).status).toBe(201)
    server.clock.advance(day + 1)
    const after = await post("expiring-2", { name: "After" })
    expect(after.status).toBe(201)
    expect(after.body.knowledgebase.name).toBe("After")
  })
})

describe("stored errors and server faults", () => {
  it("a plan_limit answer is stored and replayed even after the plan is raised", async () => {
    const key = await server.createOrganization("capped", "pro")
    await insertKnowledgebases(server, { org: "capped", count: 50 })

    const refused = await post("capped-1", { name: "Fifty-first" }, key)
    expectError(refused, 403, "plan_limit")
    expect(await countKnowledgebases(server, "capped")).toBe(50)

    await setPlan(server, "capped", "agency")
    const replay = await post("capped-1", { name: "Fifty-first" }, key)
    expect(replay.status).toBe(403)
    expect(replay.text).toBe(refused.text)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(await countKnowledgebases(server, "capped")).toBe(50)

    const fresh = await post("capped-2", { name: "Fifty-first" }, key)
    expect(fresh.status).toBe(201)
    expect(await countKnowledgebases(server, "capped")).toBe(51)
  })

  it("a server fault is not stored: the retry runs again", async () => {
    await sql(server, (db) => db`ALTER TABLE knowledgebases RENAME TO knowledgebases_away`)
    const failed = await post("fault-1", { name: "After a fault" }).finally(() =>
      sql(server, (db) => db`ALTER TABLE knowledgebases_away RENAME TO knowledgebases`)
    )
    expectError(failed, 500, "server_error")
    const retry = await post("fault-1", { name: "After a fault" })
    expect(retry.status).toBe(201)
    expect(retry.headers.get("idempotent-replayed")).toBeNull()
    expect(await namedCount("After a fault")).toBe(1)
  })
})

describe("concurrency", () => {
  it("20 identical requests at once create exactly one Knowledgebase", async () => {
    const before = await countKnowledgebases(server)
    const responses = await Promise.all(Array.from({ length: 20 }, () => post("burst-1", { name: "Burst" })))
    const created = responses.filter((r) => r.status === 201)
    const others = responses.filter((r) => r.status !== 201)
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(new Set(created.map((r) => r.body.knowledgebase.id)).size).toBe(1)
    expect(new Set(created.map((r) => r.text)).size).toBe(1)
    for (const response of others) expectError(response, 409, "conflict")
    expect(await countKnowledgebases(server)).toBe(before + 1)
    expect(await namedCount("Burst")).toBe(1)

    const after = await post("burst-1", { name: "Burst" })
    expect(after.headers.get("idempotent-replayed")).toBe("true")
    expect(after.text).toBe(created[0]!.text)
  })
})

describe("a request still running", () => {
  /** Records a claim as the first request would while it runs: same organization, address, key and body. */
  const claimInFlight = async (idempotencyKey: string, body: unknown) => {
    const organization = await organizationId(server)
    const hash = createHash("sha256").update(JSON.stringify(body)).digest("hex")
    await sql(
      server,
      (db) => db`INSERT INTO idempotency_keys (organization_id, address, key, request_hash, state, created_at, expires_at)
        VALUES (${organization}, 'POST /api/v1/knowledgebases', ${idempotencyKey}, ${hash}, 'running',
                ${server.clock.now()}, ${server.clock.now() + day})`
    )
  }

  it("a second request with the same key and body while the first runs is 409 conflict and runs nothing", async () => {
    await claimInFlight("in-flight-1", { name: "Slow" })
    const before = await countKnowledgebases(server)
    const response = await post("in-flight-1", { name: "Slow" })
    expectError(response, 409, "conflict")
    expect(response.body.error.message).toMatch(/still being processed/)
    expect(await countKnowledgebases(server)).toBe(before)
  })

  it("a claim left running by a process that died is taken over after five minutes", async () => {
    await claimInFlight("in-flight-2", { name: "Orphan" })
    expectError(await post("in-flight-2", { name: "Orphan" }), 409, "conflict")
    server.clock.advance(5 * 60_000 + 1)
    const response = await post("in-flight-2", { name: "Orphan" })
    expect(response.status).toBe(201)
    expect(await namedCount("Orphan")).toBe(1)
  })
})
