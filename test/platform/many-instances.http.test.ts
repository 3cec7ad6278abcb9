/**
 * Several `svc serve` instances on one PostgreSQL database (issue 13), each with its own pool, read
 * path, caches and workers, as behind a load balancer: what one commits, the others see on their
 * next request, and work sent to all of them at once happens once. (pg project only.)
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { createKeyRecord, expectError, sql } from "../support/fixtures.js"
import { instancesOnOneDatabase } from "../support/instances.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"
import { readySource } from "../support/sources.js"

let database: { readonly url: string }
let instances: Array<TestServer> = []

instancesOnOneDatabase({ requestsPerMinute: 100_000 }, (started) => ({ database, instances } = started))

const a = () => instances[0]!
const b = () => instances[1]!
const c = () => instances[2]!

describe("three instances on one database", () => {
  it("a key revoked through one instance fails on the very next request to every other", async () => {
    for (let round = 0; round < 3; round++) {
      const { key, secret } = await createKeyRecord(a(), { name: `shared ${round}`, scopes: "all" })
      // Each instance's credential cache holds the key (a second use writes nothing: last use is kept per minute).
      for (let use = 0; use < 3; use++) {
        for (const instance of instances) expect((await instance.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
      }
      await a().admin(Effect.flatMap(AccountsService, (accounts) => accounts.revokeKey("default", key.id)))
      expectError(await b().request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
      expectError(await c().request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
      expectError(await a().request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
    }
  })

  it("an idempotent create sent to all three at once runs once; every answer is the one stored", async () => {
    const name = `Once ${Date.now()}`
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        instances[i % 3]!.request("POST", "/knowledgebases", { body: { name }, headers: { "idempotency-key": "many-instances-1" } })
      )
    )
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 12 }, () => 201))
    expect(new Set(responses.map((r) => r.text)).size).toBe(1)
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    const listed = await c().request("GET", "/knowledgebases?limit=100")
    expect((listed.body.knowledgebases as Array<{ name: string }>).filter((kb) => kb.name === name)).toHaveLength(1)
  })

  it("an upload accepted by one instance is indexed once, whichever worker takes it, and found through every instance", async () => {
    const kb = (await a().request("POST", "/knowledgebases", { body: { name: "Shared index" } })).body.knowledgebase.id as string
    const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} about the quartermaster ledger.`).join("\n\n")
    const source = await readySource(b(), kb, { name: "ledger.txt", text })
    const [stored] = await sql(a(), (db) =>
      db<{ rows: number; numbers: number }>`SELECT count(*) AS rows, count(DISTINCT seq) AS numbers FROM passages WHERE source_id = ${source.id}`
    )
    expect(stored!.rows).toBeGreaterThan(0)
    expect(stored!.rows).toBe(stored!.numbers)
    expect(await sql(a(), (db) => db`SELECT * FROM ingestion_jobs WHERE source_id = ${source.id}`)).toEqual([])
    const counts = await Promise.all(
      instances.map(async (instance) => {
        const response = await instance.request("POST", `/knowledgebases/${kb}/search`, { body: { query: "quartermaster", kinds: ["documents"], limit: 100 } })
        expect(response.status).toBe(200)
        return (response.body.results as Array<{ citation: { sourceId: string; passageId: string } }>).map((r) => r.citation.passageId)
      })
    )
    expect(counts[0]!.length).toBeGreaterThan(0)
    expect(new Set(counts[0]).size).toBe(counts[0]!.length)
    expect(counts[1]).toEqual(counts[0])
    expect(counts[2]).toEqual(counts[0])
    const read = await c().request("GET", `/knowledgebases/${kb}/sources/${source.id}`)
    expect(read.body.source.status).toBe("ready")
  })
})

describe("three instances at the spec's rate of 120 requests a minute per key", () => {
  let limited: Array<TestServer> = []
  beforeAll(async () => {
    const clock = new ManualClock()
    const key = instances[0]!.key
    limited = await Promise.all([0, 1, 2].map(() => startTestServer({ clock, key, server: { database: database.url } })))
  })
  afterAll(async () => {
    for (const instance of limited) await instance.stop()
  })

  it("the limit is exact across them: 120 of 130 concurrent requests pass, 10 are 429 with Retry-After", async () => {
    const { secret } = await createKeyRecord(limited[0]!, { name: "rated", scopes: "all" })
    const responses = await Promise.all(
      Array.from({ length: 130 }, (_, i) => limited[i % 3]!.request("GET", "/knowledgebases", { key: secret }))
    )
    expect(responses.filter((r) => r.status === 200)).toHaveLength(120)
    const refused = responses.filter((r) => r.status !== 200)
    expect(refused).toHaveLength(10)
    for (const response of refused) {
      expectError(response, 429, "rate_limited")
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
    }
  })
})
