/**
 * `WriteTransactions.transaction` on a real SQLite database (the writer's own transaction,
 * `sqlite-connection.ts`): Effect code, `@effect/sql` statements and fast-path bodies inside it
 * commit together; a failure or a defect rolls everything back (the tables it wrote still count as moved: a cache miss, never a stale answer); a nested one is a savepoint whose
 * failure undoes only its own writes; the write tracking bumps the tables written once the COMMIT
 * ran and never for a rollback; concurrent transactions run one at a time.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Either, Exit, Fiber, Layer } from "effect"
import { join } from "node:path"
import { expect, it } from "vitest"
import { SqliteConnectionLive, SqliteWriter } from "../../server/platform/sql/sqlite-connection.js"
import { declareWrites, writing } from "../../server/platform/sql/write-declaration.js"
import { sqliteWriteTransactions, txRun, WriteTransactions } from "../../server/platform/sql/write-fast-path.js"
import { sqliteWriteSuite } from "../support/sqlite-writes.js"

const { dataDir, run } = sqliteWriteSuite("svc-writer-transaction-")

const settingWrites = declareWrites("settings")

/** Writes one setting through `@effect/sql`. */
const putWithSql = (key: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.orDie(sql`INSERT INTO settings (name, value) VALUES (${key}, 'v')`.pipe(writing(settingWrites)))
  )

/** Writes one setting through a fast-path body. */
const putWithBody = (key: string) =>
  Effect.flatMap(WriteTransactions, (writes) => writes.run(() => txRun("INSERT INTO settings (name, value) VALUES (?, 'v')", [key], settingWrites)))

const keysLike = (prefix: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(Effect.orDie(sql<{ key: string }>`SELECT name AS key FROM settings WHERE name LIKE ${`${prefix}%`} ORDER BY name`), (rows) => rows.map((row) => row.key))
  )

const generation = Effect.map(SqliteWriter, (writer) => writer.generations.generationOf(["settings"]))

it("commits Effect code, @effect/sql statements and fast-path bodies together, bumping the tables once it committed", async () => {
  const outcome = await run(
    Effect.gen(function* () {
      const writes = yield* WriteTransactions
      const writer = yield* SqliteWriter
      const before = yield* generation
      let during = -1
      yield* writes.transaction(
        Effect.gen(function* () {
          yield* putWithSql("commit-a")
          yield* Effect.yieldNow()
          yield* putWithBody("commit-b")
          during = yield* generation
          expect(writer.db.inTransaction).toBe(true)
        })
      )
      return { before, during, after: yield* generation, keys: yield* keysLike("commit-"), open: writer.db.inTransaction }
    })
  )
  expect(outcome.keys).toEqual(["commit-a", "commit-b"])
  expect(outcome.during).toBe(outcome.before)
  expect(outcome.after).toBeGreaterThan(outcome.before)
  expect(outcome.open).toBe(false)
})

it("rolls everything back on an expected failure and on a defect, leaving the writer free", async () => {
  const outcome = await run(
    Effect.gen(function* () {
      const writes = yield* WriteTransactions
      const writer = yield* SqliteWriter
      const failed = yield* Effect.either(writes.transaction(Effect.zipRight(Effect.zipRight(putWithSql("fail-a"), putWithBody("fail-b")), Effect.fail("refused" as const))))
      const died = yield* Effect.exit(writes.transaction(Effect.zipRight(putWithBody("die-a"), Effect.dieMessage("boom"))))
      return { failed, died: died._tag, keys: [...(yield* keysLike("fail-")), ...(yield* keysLike("die-"))], idle: writer.idle() }
    })
  )
  expect(outcome.failed).toEqual(Either.left("refused"))
  expect(outcome.died).toBe("Failure")
  expect(outcome.keys).toEqual([])
  expect(outcome.idle).toBe(true)
})

it("runs a nested transaction as a savepoint: its failure undoes its own writes and keeps the outer ones", async () => {
  const keys = await run(
    Effect.gen(function* () {
      const writes = yield* WriteTransactions
      yield* writes.transaction(
        Effect.gen(function* () {
          yield* putWithSql("nest-outer")
          const inner = yield* Effect.either(writes.transaction(Effect.zipRight(putWithBody("nest-inner"), Effect.fail("inner refused" as const))))
          expect(inner).toEqual(Either.left("inner refused"))
          yield* writes.transaction(putWithSql("nest-kept"))
        })
      )
      return yield* keysLike("nest-")
    })
  )
  expect(keys).toEqual(["nest-kept", "nest-outer"])
})

it("runs concurrent transactions one at a time, each reading what the one before committed", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const writes = yield* WriteTransactions
      const sql = yield* SqlClient.SqlClient
      yield* putWithSql("counter-0")
      const step = writes.transaction(
        Effect.gen(function* () {
          const rows = yield* Effect.orDie(sql<{ n: number }>`SELECT count(*) AS n FROM settings WHERE name LIKE 'counter-%'`)
          yield* Effect.yieldNow()
          yield* putWithBody(`counter-${rows[0]!.n}`)
          return rows[0]!.n
        })
      )
      return yield* Effect.all(Array.from({ length: 8 }, () => step), { concurrency: "unbounded" })
    })
  )
  expect([...seen].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
})

it("rolls back a transaction that outlives its time box, interrupting its fiber, and frees the writer for the next", async () => {
  const outcome = await run(
    Effect.scoped(Effect.gen(function* () {
      yield* putWithSql("box-seed")
      // A second connection on the same file with a 100 ms time box (the service's is 5 seconds).
      const boxed = yield* Layer.build(SqliteConnectionLive({ filename: join(dataDir(), "svc.sqlite"), prepareCacheSize: 10, transactionTimeBoxMs: 100 }))
      const writer = Context.get(boxed, SqliteWriter)
      const writes = sqliteWriteTransactions(writer)
      const insert = (key: string) => writes.run(() => txRun("INSERT INTO settings (name, value) VALUES (?, 'v')", [key], settingWrites))
      const stuck = yield* Fiber.await(yield* Effect.fork(writes.transaction(Effect.zipRight(insert("box-stuck"), Effect.sleep("10 seconds")))))
      yield* writes.transaction(insert("box-after"))
      return { interrupted: Exit.isInterrupted(stuck), idle: writer.idle() }
    }))
  )
  expect(outcome).toEqual({ interrupted: true, idle: true })
  expect(await run(keysLike("box-"))).toEqual(["box-after", "box-seed"])
})
