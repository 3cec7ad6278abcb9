/**
 * The read connection on SQLite (`read-connection.ts`): a read runs on the writer connection while
 * the writer is idle (its page cache survives its own commits), and on the read-only connection
 * while any fiber holds a write transaction, so a read never sees uncommitted rows and never waits.
 * A statement that writes is refused either way.
 */
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { DatabaseLive } from "../../server/platform/sql/database.js"
import { ReadConnection } from "../../server/platform/sql/read-connection.js"
import { SqliteWriter } from "../../server/platform/sql/sqlite-connection.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

let dataDir: string
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "svc-read-connection-"))
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const run = <A>(body: Effect.Effect<A, unknown, SqlClient.SqlClient | ReadConnection>) =>
  Effect.runPromise(body.pipe(Effect.provide(ReadConnection.Default.pipe(Layer.provideMerge(DatabaseLive(dataDir)))), Effect.scoped, Effect.orDie))

const count = (reader: ReadConnection, table: string) =>
  Effect.map(reader.all<{ n: number }>(`SELECT count(*) AS n FROM ${table}`, []), (rows) => rows[0]!.n)

it("reads on the idle writer, and on the reader while a transaction is open, seeing only committed rows", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const reader = yield* ReadConnection
      const writer = Option.getOrThrow(yield* Effect.serviceOption(SqliteWriter))
      yield* sql`CREATE TABLE IF NOT EXISTS notes (body TEXT NOT NULL) STRICT`
      // A temporary table exists on the connection that made it only: it shows which one answered.
      yield* writer.withConnection((db) => db.exec("CREATE TEMP TABLE IF NOT EXISTS on_writer (x INTEGER)"))
      const idle = { notes: yield* count(reader, "notes"), onWriter: yield* Effect.either(count(reader, "temp.on_writer")) }

      const opened = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO notes (body) VALUES ('uncommitted')`.pipe(writing(writesEveryTable))
            yield* Deferred.succeed(opened, undefined)
            yield* Deferred.await(release)
          })
        )
      )
      yield* Deferred.await(opened)
      const during = { notes: yield* count(reader, "notes"), onWriter: yield* Effect.either(count(reader, "temp.on_writer")) }
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      const after = { notes: yield* count(reader, "notes"), onWriter: yield* Effect.either(count(reader, "temp.on_writer")) }
      return { idle, during, after }
    })
  )
  expect(seen.idle.notes).toBe(0)
  expect(seen.idle.onWriter._tag).toBe("Right")
  expect(seen.during.notes).toBe(0)
  expect(seen.during.onWriter._tag).toBe("Left")
  expect(seen.after.notes).toBe(1)
  expect(seen.after.onWriter._tag).toBe("Right")
})

it("refuses a statement that writes, on the idle writer as on the reader, and nothing is written", async () => {
  const outcome = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const reader = yield* ReadConnection
      yield* sql`CREATE TABLE IF NOT EXISTS marks (x INTEGER) STRICT`
      const refused = yield* Effect.either(reader.all("INSERT INTO marks (x) VALUES (1)", []))
      const refusedRaw = yield* Effect.either(reader.values("INSERT INTO marks (x) VALUES (2) RETURNING x", []))
      return { refused: refused._tag, refusedRaw: refusedRaw._tag, marks: yield* count(reader, "marks") }
    })
  )
  expect(outcome).toEqual({ refused: "Left", refusedRaw: "Left", marks: 0 })
})
