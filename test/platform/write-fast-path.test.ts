/**
 * The write fast path on a real database: a transaction body runs whole, after any `@effect/sql`
 * transaction holding the writer (never inside it), as a savepoint of one the calling fiber holds,
 * rolls back whole on a statement error, and the portable form (`@effect/sql` statements) drives
 * the same body to the same result; only the SQLite form is synchronous (nothing runs alongside it).
 */
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { DatabaseLive, walCheckpointPages } from "../../server/platform/sql/database.js"
import {
  numberPlaceholders,
  portableWriteTransactions,
  type TxBody,
  txAll,
  txRun,
  WriteTransactions
} from "../../server/platform/sql/write-fast-path.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

let dataDir: string
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "svc-write-fast-path-"))
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const run = <A>(body: Effect.Effect<A, unknown, WriteTransactions | SqlClient.SqlClient>) =>
  Effect.runPromise(
    body.pipe(Effect.provide(WriteTransactions.Default.pipe(Layer.provideMerge(DatabaseLive(dataDir)))), Effect.scoped, Effect.orDie)
  )

/** Counts the rows of `table`, inserts one named `name`, and returns the count it saw. */
function* countThenInsert(table: string, name: string): TxBody<number> {
  const [row] = yield* txAll<{ n: number }>(`SELECT count(*) AS n FROM ${table}`, [])
  yield* txRun(`INSERT INTO ${table} (name) VALUES (?)`, [name], writesEveryTable)
  return row!.n
}

it("waits for an @effect/sql transaction holding the writer, then sees what it committed", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writes = yield* WriteTransactions
      yield* sql`CREATE TABLE t1 (name TEXT NOT NULL) STRICT`
      const firstWritten = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const slow = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO t1 (name) VALUES ('slow 1')`.pipe(writing(writesEveryTable))
            yield* Deferred.succeed(firstWritten, undefined)
            yield* Deferred.await(release)
            yield* sql`INSERT INTO t1 (name) VALUES ('slow 2')`.pipe(writing(writesEveryTable))
          })
        )
      )
      yield* Deferred.await(firstWritten)
      const fast = yield* Effect.fork(writes.run(() => countThenInsert("t1", "fast")))
      yield* Effect.sleep("30 millis")
      const doneEarly = fast.unsafePoll() !== null
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(slow)
      const countSeen = yield* Fiber.join(fast)
      const names = (yield* sql<{ name: string }>`SELECT name FROM t1 ORDER BY rowid`).map((row) => row.name)
      return { doneEarly, countSeen, names }
    })
  )
  expect(seen).toEqual({ doneEarly: false, countSeen: 2, names: ["slow 1", "slow 2", "fast"] })
})

it("inside an @effect/sql transaction of the same fiber it runs as a part of it, and rolls back with it", async () => {
  const names = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writes = yield* WriteTransactions
      yield* sql`CREATE TABLE t2 (name TEXT NOT NULL) STRICT`
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO t2 (name) VALUES ('outer')`.pipe(writing(writesEveryTable))
          const seen = yield* writes.run(() => countThenInsert("t2", "inner"))
          expect(seen).toBe(1)
        })
      )
      yield* Effect.exit(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* writes.run(() => countThenInsert("t2", "rolled back"))
            return yield* Effect.fail("refused")
          })
        )
      )
      return (yield* sql<{ name: string }>`SELECT name FROM t2 ORDER BY rowid`).map((row) => row.name)
    })
  )
  expect(names).toEqual(["outer", "inner"])
})

it("a statement error rolls the whole body back", async () => {
  const outcome = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writes = yield* WriteTransactions
      yield* sql`CREATE TABLE t3 (name TEXT NOT NULL UNIQUE) STRICT`
      yield* sql`INSERT INTO t3 (name) VALUES ('taken')`.pipe(writing(writesEveryTable))
      const exit = yield* Effect.exit(
        writes.run(function* () {
          yield* txRun("INSERT INTO t3 (name) VALUES (?)", ["first"], writesEveryTable)
          yield* txRun("INSERT INTO t3 (name) VALUES (?)", ["taken"], writesEveryTable)
        })
      )
      const names = (yield* sql<{ name: string }>`SELECT name FROM t3 ORDER BY rowid`).map((row) => row.name)
      return { died: exit._tag === "Failure", names }
    })
  )
  expect(outcome).toEqual({ died: true, names: ["taken"] })
})

it("the portable form drives the same body to the same result", async () => {
  const outcome = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fast = yield* WriteTransactions
      const portable = portableWriteTransactions(sql)
      yield* sql`CREATE TABLE t4 (name TEXT NOT NULL) STRICT`
      const seen = [yield* fast.run(() => countThenInsert("t4", "a")), yield* portable.run(() => countThenInsert("t4", "b"))]
      seen.push(yield* fast.run(() => countThenInsert("t4", "c")))
      const names = (yield* sql<{ name: string }>`SELECT name FROM t4 ORDER BY rowid`).map((row) => row.name)
      return { seen, names, synchronous: [fast.synchronous, portable.synchronous] }
    })
  )
  expect(outcome).toEqual({ seen: [0, 1, 2], names: ["a", "b", "c"], synchronous: [true, false] })
})

it("the writer's commits copy the write-ahead log back every walCheckpointPages pages, not SQLite's default 1,000", async () => {
  const pages = await run(
    Effect.gen(function* () {
      const writes = yield* WriteTransactions
      return yield* writes.run(function* () {
        const [row] = yield* txAll<{ wal_autocheckpoint: number }>("PRAGMA wal_autocheckpoint", [])
        return row!.wal_autocheckpoint
      })
    })
  )
  expect(walCheckpointPages).toBe(10_000)
  expect(pages).toBe(walCheckpointPages)
})

it("numbers placeholders for PostgreSQL outside quoted text", () => {
  expect(numberPlaceholders("SELECT '?' AS q, \"a?\" FROM t WHERE a = ? AND b = ?")).toBe("SELECT '?' AS q, \"a?\" FROM t WHERE a = $1 AND b = $2")
})
