/**
 * Writes declare the tables they write (`write-declaration.ts`), on a real SQLite database: a
 * declared write bumps the generations of exactly its declared tables, widened by the schema's
 * cascading foreign keys and triggers, through both forms (an `@effect/sql` statement under
 * `writing`, a transaction body step on the fast path or through `statementsOn`); a charge of an
 * organization's credits bumps `organizations#credits` alone; a read under a declaration bumps
 * nothing. An undeclared write fails in strict mode (what the SQLite test runs use) and otherwise
 * counts as a write of every table.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect, type Exit } from "effect"
import { join } from "node:path"
import { expect, it } from "vitest"
import { SqliteConnectionLive, SqliteWriter, type SqliteWriterShape } from "../../server/platform/sql/sqlite-connection.js"
import { declareWrites, UndeclaredWrite, writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"
import { sqliteWriteTransactions, statementsOn, txAll, txRun, WriteTransactions } from "../../server/platform/sql/write-fast-path.js"
import { type SqliteWriteServices, sqliteWriteSuite } from "../support/sqlite-writes.js"

const { dataDir, run } = sqliteWriteSuite("svc-write-declaration-")

const organizationWrites = declareWrites("organizations")
const creditWrites = declareWrites("organizations#credits")
const ledgerWrites = declareWrites("idempotency_keys")
const settingWrites = declareWrites("settings")

/**
 * Runs `write` and answers which generations it moved: every table of the schema, and the
 * credits column group, each read alone.
 */
const moved = (write: Effect.Effect<unknown, unknown, SqliteWriteServices>) =>
  Effect.gen(function* () {
    const writer = yield* SqliteWriter
    const tables = [...(writer.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as Array<string>), "organizations#credits"]
    const before = tables.map((table) => writer.generations.generationOf([table]))
    yield* write
    return tables.filter((table, i) => writer.generations.generationOf([table]) !== before[i]).sort()
  })

const seedOrganization = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO organizations (id, slug, name, plan, gates, credits_remaining, credits_used, created_at)
        VALUES (${id}, ${id}, ${id}, 'pro', '[]', 10, 0, '2026-11-23T00:00:00.000Z')`.pipe(writing(organizationWrites))
  )

it("an @effect/sql statement under `writing` bumps exactly the tables it declares, in or out of a transaction", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const alone = yield* moved(sql`INSERT INTO settings (name, value) VALUES ('declared-1', 'x')`.pipe(writing(settingWrites)))
      const inTransaction = yield* moved(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO settings (name, value) VALUES ('declared-2', 'x')`.pipe(writing(settingWrites))
            yield* sql`DELETE FROM idempotency_keys WHERE key = 'none'`.pipe(writing(ledgerWrites))
          })
        )
      )
      return { alone, inTransaction }
    })
  )
  expect(seen.alone).toEqual(["settings"])
  expect(seen.inTransaction).toEqual(["idempotency_keys", "settings"])
})

it("the declaration decides, not the statement's text", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return yield* moved(sql`INSERT INTO settings (name, value) VALUES ('declared-as-keys', 'x')`.pipe(writing(ledgerWrites)))
    })
  )
  expect(seen).toEqual(["idempotency_keys"])
})

it("a transaction body step bumps exactly its declared tables, on the fast path and through statementsOn", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writes = yield* WriteTransactions
      const body = function* () {
        yield* txRun("DELETE FROM idempotency_keys WHERE key = 'none'", [], ledgerWrites)
        return yield* txAll<{ name: string }>("INSERT INTO settings (name, value) VALUES (?, 'x') RETURNING name", ["declared-tx"], settingWrites)
      }
      const fastPath = yield* moved(writes.run(body))
      const onSql = yield* moved(
        sql.withTransaction(statementsOn(sql)(function* () {
          yield* txRun("DELETE FROM idempotency_keys WHERE key = 'none'", [], ledgerWrites)
        }()))
      )
      return { fastPath, onSql }
    })
  )
  expect(seen.fastPath).toEqual(["idempotency_keys", "settings"])
  expect(seen.onSql).toEqual(["idempotency_keys"])
})

it("a charge of an organization's credits bumps organizations#credits alone; a plan change bumps the organization", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writes = yield* WriteTransactions
      yield* seedOrganization("org-credits")
      const charge = yield* moved(
        writes.run(function* () {
          yield* txRun(
            "UPDATE organizations SET credits_remaining = credits_remaining - 1, credits_used = credits_used + 1 WHERE id = ? AND credits_remaining > 0",
            ["org-credits"],
            creditWrites
          )
        })
      )
      const plan = yield* moved(sql`UPDATE organizations SET plan = 'agency' WHERE id = 'org-credits'`.pipe(writing(organizationWrites)))
      return { charge, plan }
    })
  )
  expect(seen.charge).toEqual(["organizations#credits"])
  expect(seen.plan).toContain("organizations")
  expect(seen.plan).not.toContain("organizations#credits")
})

it("a declared table's cascading foreign keys and triggers are read from the schema: deleting an organization bumps its keys and the page search index, not settings", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* seedOrganization("org-cascade")
      return yield* moved(sql`DELETE FROM organizations WHERE id = 'org-cascade'`.pipe(writing(organizationWrites)))
    })
  )
  expect(seen).toEqual(expect.arrayContaining(["organizations", "api_keys", "members", "knowledgebases", "pages", "pages_fts"]))
  expect(seen).not.toContain("settings")
  expect(seen).not.toContain("organizations#credits")
})

it("a read under a declaration bumps nothing; writesEveryTable bumps every table", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const read = yield* moved(sql`SELECT count(*) AS n FROM settings`.pipe(writing(settingWrites)))
      const every = yield* moved(sql`INSERT INTO settings (name, value) VALUES ('every', 'x')`.pipe(writing(writesEveryTable)))
      const writer = yield* SqliteWriter
      const tables = writer.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as Array<string>
      return { read, every, tables }
    })
  )
  expect(seen.read).toEqual([])
  expect(seen.every).toEqual([...seen.tables, "organizations#credits"].sort())
})

it("refuses a declaration that names no table, a name that cannot be a table, or an unknown column group", () => {
  expect(() => declareWrites()).toThrow(TypeError)
  expect(() => declareWrites("pages; DROP")).toThrow(TypeError)
  expect(() => declareWrites("organizations#plan")).toThrow(TypeError)
  expect(declareWrites("pages", "pages", "organizations#credits").tables).toEqual(["pages", "organizations#credits"])
})

/** A client of its own on `file`, strict or not, with a table `notes` made by undeclared DDL. */
const withOwnClient = <A>(strictWrites: boolean, file: string, use: (sql: SqlClient.SqlClient, writer: SqliteWriterShape) => Effect.Effect<A, unknown, SqlClient.SqlClient | SqliteWriter>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writer = yield* SqliteWriter
      yield* sql`CREATE TABLE IF NOT EXISTS notes (body TEXT NOT NULL) STRICT`
      return yield* use(sql, writer)
    }).pipe(Effect.provide(SqliteConnectionLive({ filename: join(dataDir(), file), prepareCacheSize: 10, strictWrites })), Effect.scoped)
  )

it("in strict mode an undeclared write fails before it runs, through either form, and writes nothing; DDL and declared writes run", async () => {
  const seen = await withOwnClient(true, "strict.sqlite", (sql, writer) =>
    Effect.gen(function* () {
      const viaSql = yield* Effect.either(sql`INSERT INTO notes (body) VALUES ('undeclared')`)
      const viaBody = yield* Effect.exit(
        sqliteWriteTransactions(writer).run(function* () {
          yield* txRun("INSERT INTO notes (body) VALUES ('declared first')", [], declareWrites("notes"))
          yield* txRun("INSERT INTO notes (body) VALUES ('undeclared')", [])
        })
      )
      yield* sql`INSERT INTO notes (body) VALUES ('declared')`.pipe(writing(declareWrites("notes")))
      const rows = yield* sql<{ body: string }>`SELECT body FROM notes ORDER BY body`
      return { viaSql, viaBody, rows: rows.map((row) => row.body) }
    })
  )
  expect(seen.viaSql._tag).toBe("Left")
  expect(seen.viaSql._tag === "Left" && seen.viaSql.left.cause).toBeInstanceOf(UndeclaredWrite)
  expect(seen.viaBody._tag).toBe("Failure")
  expect((Cause.squash((seen.viaBody as Exit.Failure<unknown, unknown>).cause) as { cause?: unknown }).cause).toBeInstanceOf(UndeclaredWrite)
  expect(seen.rows).toEqual(["declared"])
})

it("out of strict mode an undeclared write runs and counts as a write of every table", async () => {
  const seen = await withOwnClient(false, "lenient.sqlite", (sql, writer) =>
    Effect.gen(function* () {
      const before = [writer.generations.generationOf(["notes"]), writer.generations.generationOf(["anything_else"])]
      yield* sql`INSERT INTO notes (body) VALUES ('undeclared')`
      const after = [writer.generations.generationOf(["notes"]), writer.generations.generationOf(["anything_else"])]
      const rows = yield* sql<{ body: string }>`SELECT body FROM notes`
      return { before, after, rows: rows.map((row) => row.body) }
    })
  )
  expect(seen.rows).toEqual(["undeclared"])
  expect(seen.after[0]).toBeGreaterThan(seen.before[0]!)
  expect(seen.after[1]).toBeGreaterThan(seen.before[1]!)
})
