/**
 * The `data_version` cache on a real database: the read connection of the server, and commits from
 * the writer connection (as a revoke from the CLI or another request would make). An entry whose
 * query ran before a commit is never served after it, even when it is filled after a lookup that
 * already saw the commit.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { dataVersionCache } from "../../server/platform/sql/data-version-cache.js"
import { DatabaseLive } from "../../server/platform/sql/database.js"
import { ReadConnection } from "../../server/platform/sql/read-connection.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

interface KeyRow {
  readonly id: string
  readonly revoked: number
}

let dataDir: string
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "svc-version-cache-"))
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** Runs `body` with a fresh cache over the read connection, a writer, and a key `k` not revoked. */
const withCache = <A>(
  body: (tools: {
    readonly cache: ReturnType<typeof dataVersionCache<string, KeyRow>>
    readonly read: Effect.Effect<KeyRow>
    readonly revoke: Effect.Effect<void>
  }) => Effect.Effect<A>
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const reader = yield* ReadConnection
      yield* sql`CREATE TABLE IF NOT EXISTS keys (id TEXT PRIMARY KEY, revoked INTEGER NOT NULL) STRICT`
      yield* sql`INSERT INTO keys (id, revoked) VALUES ('k', 0) ON CONFLICT (id) DO UPDATE SET revoked = 0`.pipe(writing(writesEveryTable))
      const read = Effect.map(Effect.orDie(reader.all<KeyRow>("SELECT id, revoked FROM keys WHERE id = ?", ["k"])), (rows) => rows[0]!)
      const revoke = Effect.asVoid(Effect.orDie(sql`UPDATE keys SET revoked = 1 WHERE id = 'k'`.pipe(writing(writesEveryTable))))
      return yield* body({ cache: dataVersionCache<string, KeyRow>(reader.dataVersion, 10), read, revoke })
    }).pipe(Effect.provide(ReadConnection.Default.pipe(Layer.provideMerge(DatabaseLive(dataDir)))), Effect.scoped, Effect.orDie)
  )

it("a lookup after a commit queries again", async () => {
  const seen = await withCache(({ cache, read, revoke }) =>
    Effect.gen(function* () {
      const first = yield* cache.get("k", read)
      const cached = yield* cache.get("k", Effect.die("a kept entry is served without a query"))
      yield* revoke
      const after = yield* cache.get("k", read)
      return [first.revoked, cached.revoked, after.revoked]
    })
  )
  expect(seen).toEqual([0, 0, 1])
})

it("an entry whose query ran before a revoke is not served after it, though filled after a lookup that saw the revoke", async () => {
  const seen = await withCache(({ cache, read, revoke }) =>
    Effect.gen(function* () {
      // Request A queries the key, then a revoke commits before A fills its entry; meanwhile
      // request B looks the key up after the commit and fills the revoked row.
      const stale = yield* cache.get(
        "k",
        Effect.gen(function* () {
          const row = yield* read
          yield* revoke
          const fromB = yield* cache.get("k", read)
          expect(fromB.revoked).toBe(1)
          return row
        })
      )
      const next = yield* cache.get("k", read)
      const kept = yield* cache.get("k", Effect.die("the fresh entry is served without a query"))
      return [stale.revoked, next.revoked, kept.revoked]
    })
  )
  expect(seen).toEqual([0, 1, 1])
})

it("an entry not kept is queried again; a full cache lets its oldest entry go", async () => {
  const queries = await withCache(({ read }) =>
    Effect.gen(function* () {
      const reader = yield* ReadConnection
      const cache = dataVersionCache<string, KeyRow | null>(reader.dataVersion, 2)
      let count = 0
      const counted = Effect.tap(read, () => Effect.sync(() => count++))
      yield* cache.get("missing", Effect.as(counted, null), (row) => row !== null)
      yield* cache.get("missing", Effect.as(counted, null), (row) => row !== null)
      for (const key of ["a", "b", "c", "a"]) yield* cache.get(key, counted)
      return count
    }).pipe(Effect.provide(ReadConnection.Default.pipe(Layer.provideMerge(DatabaseLive(dataDir)))), Effect.scoped, Effect.orDie)
  )
  expect(queries).toBe(6)
})
