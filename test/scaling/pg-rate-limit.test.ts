/**
 * The shared rate limit on PostgreSQL (issue 24): one statement a take against an unlogged row per
 * bucket, exact across instances, and invisible to the caches' data version (a take commits, yet
 * every instance keeps serving its cached credentials). Three `svc serve` instances on one
 * database, as behind a load balancer. (pg project only.)
 */
import { Effect } from "effect"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { pgSweep, pgTake } from "../../server/platform/pg-rate-limiter.js"
import { createKeyRecord, expectError } from "../support/fixtures.js"
import { instancesOnOneDatabase } from "../support/instances.js"
import { ManualClock, type TestServer } from "../support/server.js"

let database: { readonly url: string }
let instances: Array<TestServer> = []
let db: pg.Client
const clock = new ManualClock()

instancesOnOneDatabase({ clock }, (started) => ({ database, instances, db } = started))

/** The bucket's row: how many requests it counts in its window, and how many rows it has. */
const bucketOf = async (keyId: string) => {
  const { rows } = await db.query<{ rows: number; counted: number }>(
    `SELECT count(DISTINCT bucket)::int AS rows, coalesce(sum(n), 0)::int AS counted FROM rate_limit_buckets, unnest(counts) AS x (n) WHERE bucket = $1`,
    [`requests:${keyId}`]
  )
  return rows[0]!
}

describe("the rate limit across three instances", () => {
  it("300 concurrent requests through three instances: exactly 120 pass, 180 are 429 with Retry-After 60; one bucket row counts 120", async () => {
    clock.advance(120_000)
    const { key, secret } = await createKeyRecord(instances[0]!, { name: "burst", scopes: "all" })
    const responses = await Promise.all(Array.from({ length: 300 }, (_, i) => instances[i % 3]!.request("GET", "/knowledgebases", { key: secret })))
    expect(responses.filter((r) => r.status === 200)).toHaveLength(120)
    const refused = responses.filter((r) => r.status !== 200)
    expect(refused).toHaveLength(180)
    for (const response of refused) {
      expectError(response, 429, "rate_limited")
      expect(response.headers.get("retry-after")).toBe("60")
    }
    expect(await bucketOf(key.id)).toEqual({ rows: 1, counted: 120 })

    // The window slides: a millisecond before it ends nothing passes; at its end, 120 again and no more.
    clock.advance(59_999)
    expectError(await instances[1]!.request("GET", "/knowledgebases", { key: secret }), 429, "rate_limited")
    clock.advance(1)
    const again = await Promise.all(Array.from({ length: 150 }, (_, i) => instances[i % 3]!.request("GET", "/knowledgebases", { key: secret })))
    expect(again.filter((r) => r.status === 200)).toHaveLength(120)
    expect(again.filter((r) => r.status === 429)).toHaveLength(30)
    // The times that left the window are gone from the row: it never holds more than the window's.
    expect(await bucketOf(key.id)).toEqual({ rows: 1, counted: 120 })
  })

  it("counting requests moves no instance's data version, nor do heartbeats: a change no instance was told of stays unseen until the shared sequence moves", async () => {
    clock.advance(120_000)
    const { key, secret } = await createKeyRecord(instances[0]!, { name: "cached", scopes: "all" })
    // Each instance's credential cache holds the key (the first use writes its last use, once a minute).
    for (let use = 0; use < 3; use++) {
      for (const instance of instances) expect((await instance.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
    }
    // The key revoked behind every instance's back: no notification, no advance of the sequence.
    await db.query("ALTER TABLE api_keys DISABLE TRIGGER svc_data_changed")
    try {
      await db.query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2", [new Date(clock.now()).toISOString(), key.id])
      // Two heartbeats of every instance (every 2 s) go by: a beat writes no data a cache reads, so it
      // moves nothing either (it did: every instance's caches were dropped every 2 s).
      const sequence = async () => (await db.query<{ v: string }>("SELECT last_value AS v FROM svc_data_version")).rows[0]!.v
      const idleFrom = await sequence()
      await new Promise((resolve) => setTimeout(resolve, 4_500))
      expect(await sequence()).toBe(idleFrom)
      // Every one of these requests is counted (a commit each), and every instance still serves its cached key.
      const before = (await bucketOf(key.id)).counted
      for (let use = 0; use < 3; use++) {
        for (const instance of instances) expect((await instance.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
      }
      expect((await bucketOf(key.id)).counted).toBe(before + 9)
      // What every svc process does after a commit that wrote: the next request to every instance sees it.
      await db.query("SELECT nextval('svc_data_version')")
      for (const instance of instances) expectError(await instance.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
    } finally {
      await db.query("ALTER TABLE api_keys ENABLE TRIGGER svc_data_changed")
    }
  })
})

describe("the buckets' sweep", () => {
  it("deletes the buckets idle for an hour, in one statement, and keeps the others", async () => {
    const pool = new pg.Pool({ connectionString: database.url, max: 2 })
    try {
      const rate = { name: "sweep-test", limit: 2, windowMs: 60_000 }
      const t0 = clock.now()
      await Effect.runPromise(pgTake(pool)(rate, "idle", t0))
      await Effect.runPromise(pgTake(pool)(rate, "busy", t0))
      await Effect.runPromise(pgTake(pool)(rate, "busy", t0 + 3_600_000))
      await Effect.runPromise(pgSweep(pool)(t0 + 3_600_001))
      const { rows } = await pool.query<{ bucket: string }>("SELECT bucket FROM rate_limit_buckets WHERE bucket LIKE 'sweep-test:%' ORDER BY bucket")
      expect(rows.map((row) => row.bucket)).toEqual(["sweep-test:busy"])
      // Its window kept only the take still in it.
      const refusal = await Effect.runPromise(Effect.flip(Effect.zipRight(pgTake(pool)(rate, "busy", t0 + 3_600_002), pgTake(pool)(rate, "busy", t0 + 3_600_003))))
      expect(refusal.retryAfterSeconds).toBe(60)
    } finally {
      await pool.end()
    }
  })
})
