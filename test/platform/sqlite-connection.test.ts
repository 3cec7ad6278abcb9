/**
 * svc's own SQLite client (`sqlite-connection.ts`) keeps the `@effect/sql` client's interface
 * whole: statements, transactions, and streams of a query's rows.
 */
import { SqlClient } from "@effect/sql"
import { Chunk, Effect, Stream } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"
import { SqliteConnectionLive } from "../../server/platform/sql/sqlite-connection.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

const dir = mkdtempSync(join(tmpdir(), "svc-sqlite-connection-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const withClient = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, use).pipe(Effect.provide(SqliteConnectionLive({ filename: join(dir, "db.sqlite"), prepareCacheSize: 10 })))
  )

it("streams a query's rows, in order, with the client's row transform", async () => {
  const rows = await withClient((sql) =>
    Effect.gen(function* () {
      yield* sql`CREATE TABLE IF NOT EXISTS numbers (n INTEGER NOT NULL, name_text TEXT NOT NULL)`
      yield* sql`DELETE FROM numbers`.pipe(writing(writesEveryTable))
      for (const n of [3, 1, 2]) yield* sql`INSERT INTO numbers (n, name_text) VALUES (${n}, ${`n${n}`})`.pipe(writing(writesEveryTable))
      return yield* Stream.runCollect(sql`SELECT n, name_text FROM numbers ORDER BY n`.stream)
    })
  )
  expect(Chunk.toReadonlyArray(rows)).toEqual([
    { n: 1, name_text: "n1" },
    { n: 2, name_text: "n2" },
    { n: 3, name_text: "n3" }
  ])
})

it("a stream of a failing statement fails with a SqlError", async () => {
  const outcome = await withClient((sql) => Effect.either(Stream.runCollect(sql`SELECT * FROM no_such_table`.stream)))
  expect(outcome._tag).toBe("Left")
  expect((outcome as { left: { _tag: string } }).left._tag).toBe("SqlError")
})
