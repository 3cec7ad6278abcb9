/**
 * `Idempotency-Key` on `POST /knowledgebases` (and a page create): replays within 24 hours,
 * conflicts on a different body, scope (organization and address), expiry, stored errors, server
 * faults, a burst of identical concurrent requests, exactly-once (a create and its stored answer
 * commit together or not at all), and keys left `running` by a process of an earlier version.
 */
import { Effect } from "effect"
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
import { onSqlite } from "../support/postgres.js"

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
  it("20 identical requests at once create exactly one Knowledgebase; the others replay it", async () => {
    const before = await countKnowledgebases(server)
    const responses = await Promise.all(Array.from({ length: 20 }, () => post("burst-1", { name: "Burst" })))
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 201))
    expect(new Set(responses.map((r) => r.text)).size).toBe(1)
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(19)
    expect(await countKnowledgebases(server)).toBe(before + 1)
    expect(await namedCount("Burst")).toBe(1)

    const after = await post("burst-1", { name: "Burst" })
    expect(after.headers.get("idempotent-replayed")).toBe("true")
    expect(after.text).toBe(responses[0]!.text)
  })

  it("concurrent same-key requests with different bodies: one creates, the others are 409 conflict", async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => post("burst-2", { name: `Racer ${i}` })))
    const created = responses.filter((r) => r.status === 201)
    expect(created).toHaveLength(1)
    for (const response of responses.filter((r) => r.status !== 201)) expectError(response, 409, "conflict")
    const names = (await listAllKnowledgebases(server)).map((kb) => kb.name).filter((name) => name.startsWith("Racer "))
    expect(names).toEqual([created[0]!.body.knowledgebase.name])
  })
})

// SQLite only: the failures are injected with SQLite triggers (`RAISE` in a trigger body).
describe.runIf(onSqlite)("exactly once: the create and its stored answer commit together", () => {
  const dropTriggers = () =>
    sql(server, (db) =>
      Effect.zipRight(db`DROP TRIGGER IF EXISTS lose_stored_answer`, db`DROP TRIGGER IF EXISTS lose_stored_update`)
    )

  it("when storing the answer fails, the created Knowledgebase is rolled back and the retry creates it once", async () => {
    // The ledger refuses this key's answer, as a crash between the create and the record would lose it.
    await sql(server, (db) =>
      Effect.zipRight(
        db`CREATE TRIGGER lose_stored_answer BEFORE INSERT ON idempotency_keys
             WHEN NEW.key = 'atomic-1' AND NEW.state = 'done' BEGIN SELECT RAISE(ABORT, 'answer lost'); END`,
        db`CREATE TRIGGER lose_stored_update BEFORE UPDATE ON idempotency_keys
             WHEN NEW.key = 'atomic-1' AND NEW.state = 'done' BEGIN SELECT RAISE(ABORT, 'answer lost'); END`
      )
    )
    const before = await countKnowledgebases(server)
    const failed = await post("atomic-1", { name: "Atomic" }).finally(dropTriggers)
    expectError(failed, 500, "server_error")
    expect(await namedCount("Atomic")).toBe(0)
    expect(await countKnowledgebases(server)).toBe(before)

    const retry = await post("atomic-1", { name: "Atomic" })
    expect(retry.status).toBe(201)
    expect(retry.headers.get("idempotent-replayed")).toBeNull()
    const replay = await post("atomic-1", { name: "Atomic" })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.text).toBe(retry.text)
    expect(await namedCount("Atomic")).toBe(1)
  })

  it("when the create dies after its first insert, nothing is kept and the key holds no answer", async () => {
    const kb = (await server.request("POST", "/knowledgebases", { body: { name: "Pages kept once" } })).body.knowledgebase.id
    await sql(server, (db) =>
      db`CREATE TRIGGER lose_revision BEFORE INSERT ON page_revisions
           WHEN NEW.title = 'Half written' BEGIN SELECT RAISE(ABORT, 'died'); END`
    )
    const createPage = () =>
      server.request("POST", `/knowledgebases/${kb}/pages`, {
        body: { title: "Half written", bodyMarkdown: "Body" },
        headers: { "idempotency-key": "half-1" }
      })
    const failed = await createPage().finally(() => sql(server, (db) => db`DROP TRIGGER lose_revision`))
    expectError(failed, 500, "server_error")
    const pagesNamed = () =>
      sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM pages WHERE knowledgebase_id = ${kb} AND title = 'Half written'`)
    expect((await pagesNamed())[0]!.n).toBe(0)
    expect(await sql(server, (db) => db`SELECT key FROM idempotency_keys WHERE key = 'half-1'`)).toEqual([])

    const retry = await createPage()
    expect(retry.status).toBe(201)
    expect(retry.headers.get("idempotent-replayed")).toBeNull()
    expect((await createPage()).headers.get("idempotent-replayed")).toBe("true")
    expect((await pagesNamed())[0]!.n).toBe(1)
  })
})

describe("a key left running by a process that died", () => {
  /** Records a claim as earlier versions did before running the create: same organization, address, key and body. */
  const leftRunning = async (idempotencyKey: string, body: unknown) => {
    const organization = await organizationId(server)
    const hash = createHash("sha256").update(JSON.stringify(body)).digest("hex")
    await sql(
      server,
      (db) => db`INSERT INTO idempotency_keys (organization_id, address, key, request_hash, state, created_at, expires_at)
        VALUES (${organization}, 'POST /api/v1/knowledgebases', ${idempotencyKey}, ${hash}, 'running',
                ${server.clock.now()}, ${server.clock.now() + day})`
    )
  }

  it("is answered at once: the retry creates exactly one Knowledgebase, then replays it", async () => {
    await leftRunning("orphan-1", { name: "Orphan" })
    const response = await post("orphan-1", { name: "Orphan" })
    expect(response.status).toBe(201)
    expect(response.headers.get("idempotent-replayed")).toBeNull()
    const again = await Promise.all([post("orphan-1", { name: "Orphan" }), post("orphan-1", { name: "Orphan" })])
    for (const replay of again) {
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(response.text)
    }
    expect(await namedCount("Orphan")).toBe(1)
  })

  it("holds no body to conflict with: a retry with another body creates that one", async () => {
    await leftRunning("orphan-2", { name: "Never answered" })
    const response = await post("orphan-2", { name: "Orphan after all" })
    expect(response.status).toBe(201)
    expect(await namedCount("Orphan after all")).toBe(1)
    expect(await namedCount("Never answered")).toBe(0)
  })
})
