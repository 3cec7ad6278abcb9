/**
 * A read-only connection for the hot read path. `@effect/sql-sqlite-node` serializes every
 * statement through one connection with a span, a scope and a lock per query; reads outside a
 * transaction (authentication, listings) run here instead, on plain prepared statements. In WAL mode
 * a reader sees every committed write and never waits for the writer. Reads that must see a
 * transaction's own writes stay on the `SqlClient` inside that transaction.
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
import { Effect } from "effect"
import { busyTimeoutMs } from "./database.js"
import { DatabaseBackend } from "./dialect.js"
import { pgReads } from "./pg-read-connection.js"

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

/** Plain prepared-statement reads on a dedicated read-only connection. */
export class ReadConnection extends Effect.Service<ReadConnection>()("svc/ReadConnection", {
  scoped: Effect.gen(function* () {
    const backend = yield* DatabaseBackend
    if (backend.dialect === "pg") return { ...pgReads(backend.pool), dataVersion: backend.dataVersion } satisfies Reads as Reads
    const db = yield* Effect.acquireRelease(
      Effect.sync(() => new Database(backend.filename, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs })),
      (db) => Effect.sync(() => db.close())
    )
    const statements = new Map<string, Database.Statement>()
    const prepare = (text: string) => {
      let statement = statements.get(text)
      if (!statement) {
        statement = db.prepare(text)
        statements.set(text, statement)
      }
      return statement
    }
    const rawStatements = new Map<string, Database.Statement>()
    const prepareRaw = (text: string) => {
      let statement = rawStatements.get(text)
      if (!statement) {
        statement = db.prepare(text).raw(true)
        rawStatements.set(text, statement)
      }
      return statement
    }
    const dataVersion = db.prepare("PRAGMA data_version").pluck()

    return {
      /** Every row of a `?`-parameterized query. */
      all: <Row>(text: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
        Effect.try({
          try: () => prepare(text).all(...params) as Array<Row>,
          catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
        }),
      /**
       * Every row of a query as an array of column values, in select order: for hot listings, where
       * building one object per row only to copy it into the answer costs more than the query.
       */
      values: <Row extends ReadonlyArray<unknown>>(text: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
        Effect.try({
          try: () => prepareRaw(text).all(...params) as Array<Row>,
          catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
        }),
      /** A counter that changes whenever another connection commits; compare with an earlier reading. */
      dataVersion: (): number => dataVersion.get() as number
    } satisfies Reads as Reads
  })
}) {}
