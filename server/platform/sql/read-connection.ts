/**
 * A read-only connection for the hot read path. `@effect/sql-sqlite-node` serializes every
 * statement through one connection with a span, a scope and a lock per query; reads outside a
 * transaction (authentication, listings) run here instead, on plain prepared statements. In WAL mode
 * a reader sees every committed write and never waits for the writer. Reads that must see a
 * transaction's own writes stay on the `SqlClient` inside that transaction.
 *
 * While the writer is idle (no fiber holds its lock, no transaction open) a read runs on the
 * writer connection instead, synchronously, so nothing can begin a write before it ends. SQLite
 * empties a connection's whole page cache whenever another connection has committed since its
 * last read, and nearly every request commits something (a search its credit and activity entry):
 * on the read-only connection every read started cold, while the writer's cache survives its own
 * commits (a search at 100,000 passages: about half the CPU, docs/performance.md). Statements that
 * would write are refused there, as the read-only connection refuses them.
 *
 * It also answers `PRAGMA data_version`, which changes whenever any other connection of any
 * process (the server's writer, the CLI) commits: caches of authentication data check it on every
 * request (`data-version-cache.ts`, each entry tagged with the version read before its query), so a
 * key revoked with the CLI fails on the very next request.
 *
 * On PostgreSQL the same queries run on the shared pool (`pg-read-connection.ts`) and the data
 * version is the counter of `pg-data-version.ts`.
 */
import { SqlError } from "@effect/sql/SqlError"
import Database from "better-sqlite3"
import { Effect, Option } from "effect"
import { busyTimeoutMs } from "./database.js"
import { DatabaseBackend } from "./dialect.js"
import { pgReads } from "./pg-read-connection.js"
import { SqliteWriter } from "./sqlite-connection.js"

/** What the read fast path offers, on either backend. */
export interface Reads {
  /** Every row of a `?`-parameterized query. */
  readonly all: <Row>(text: string, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Row>, SqlError>
  /**
   * Every row of a query as an array of column values, in select order: for hot listings, where
   * building one object per row only to copy it into the answer costs more than the query.
   */
  readonly values: <Row extends ReadonlyArray<unknown>>(text: string, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Row>, SqlError>
  /** A counter that changes whenever another connection commits; compare with an earlier reading. */
  readonly dataVersion: () => number
}

/** Prepared statements of one connection, kept by text (object rows and raw rows apart). */
const preparedOn = (db: Database.Database) => {
  const objects = new Map<string, Database.Statement>()
  const raws = new Map<string, Database.Statement>()
  return {
    prepare: (text: string, raw: boolean): Database.Statement => {
      const kept = raw ? raws : objects
      let statement = kept.get(text)
      if (!statement) {
        statement = raw ? db.prepare(text).raw(true) : db.prepare(text)
        kept.set(text, statement)
      }
      return statement
    }
  }
}

/** Plain prepared-statement reads on a dedicated read-only connection (or on the idle writer, see the module comment). */
export class ReadConnection extends Effect.Service<ReadConnection>()("svc/ReadConnection", {
  scoped: Effect.gen(function* () {
    const backend = yield* DatabaseBackend
    if (backend.dialect === "pg") return { ...pgReads(backend.pool), dataVersion: backend.dataVersion } satisfies Reads as Reads
    const db = yield* Effect.acquireRelease(
      Effect.sync(() => new Database(backend.filename, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs })),
      (db) => Effect.sync(() => db.close())
    )
    const writer = Option.getOrNull(yield* Effect.serviceOption(SqliteWriter))
    const readerStatements = preparedOn(db)
    const writerStatements = writer === null ? null : preparedOn(writer.db)
    /** The writer while it is idle (its page cache survives its own commits), else the reader. */
    const statementsNow = () => (writerStatements !== null && writer!.idle() ? writerStatements : readerStatements)
    const run = <T>(text: string, raw: boolean, use: (statement: Database.Statement) => T): T => {
      const statements = statementsNow()
      const statement = statements.prepare(text, raw)
      if (statements === readerStatements) return use(statement)
      if (!statement.readonly) throw new TypeError(`A read statement that writes: ${text.slice(0, 80)}`)
      try {
        return use(statement)
      } catch (cause) {
        // The writer busy with an open iterator: the reader answers the same.
        if (cause instanceof TypeError && /busy/.test(cause.message)) return use(readerStatements.prepare(text, raw))
        throw cause
      }
    }
    const dataVersion = db.prepare("PRAGMA data_version").pluck()

    return {
      /** Every row of a `?`-parameterized query. */
      all: <Row>(text: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
        Effect.try({
          try: () => run(text, false, (statement) => statement.all(...params) as Array<Row>),
          catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
        }),
      /**
       * Every row of a query as an array of column values, in select order: for hot listings, where
       * building one object per row only to copy it into the answer costs more than the query.
       */
      values: <Row extends ReadonlyArray<unknown>>(text: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
        Effect.try({
          try: () => run(text, true, (statement) => statement.all(...params) as Array<Row>),
          catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
        }),
      /** A counter that changes whenever another connection commits; compare with an earlier reading. */
      dataVersion: (): number => dataVersion.get() as number
    } satisfies Reads as Reads
  })
}) {}
