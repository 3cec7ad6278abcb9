/**
 * The database: by default the SQLite file under the data directory (WAL, foreign keys on, a busy
 * timeout), or the PostgreSQL database of a `postgres://` URL (`pg-database.ts`); either way the
 * numbered static migrations are applied at open.
 */
import { Migrator, SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Duration, Effect, Layer } from "effect"
import { existsSync, mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { databaseFile } from "./database-file.js"
import { DatabaseBackend, isPostgresUrl, maskedDatabaseUrl } from "./dialect.js"
import migration0001 from "./migrations/0001_platform.js"
import migration0002 from "./migrations/0002_apps.js"
import migration0003 from "./migrations/0003_pages.js"
import migration0004 from "./migrations/0004_sources.js"
import migration0005 from "./migrations/0005_change_history_fts_keys.js"
import migration0006 from "./migrations/0006_builder_authoring.js"
import migration0007 from "./migrations/0007_runs.js"
import migration0008 from "./migrations/0008_provisioning.js"
import migration0009 from "./migrations/0009_bonus_credit_adjustments.js"
import migration0010 from "./migrations/0010_webhooks.js"
import migration0011 from "./migrations/0011_portal_sign_in.js"
import migration0012 from "./migrations/0012_credit_renewal.js"
import migration0013 from "./migrations/0013_mcp_sign_in.js"
import migration0014 from "./migrations/0014_outbox_claims.js"
import migration0015 from "./migrations/0015_service_instances.js"
import migration0016 from "./migrations/0016_agent_default_model.js"
import migration0017 from "./migrations/0017_search_statistics.js"
import migration0018 from "./migrations/0018_passage_vectors.js"
import migration0019 from "./migrations/0019_source_content_claims.js"
import migration0020 from "./migrations/0020_page_search_filter.js"
import migration0021 from "./migrations/0021_run_events.js"
import migration0022 from "./migrations/0022_execution_traces.js"
import migration0023 from "./migrations/0023_conversation_lists.js"
import migration0024 from "./migrations/0024_shared_run_state.js"
import migration0025 from "./migrations/0025_execution_trace_column.js"
import { retriedWhileLosing, serializable } from "./pg-serializable.js"
import { SqliteConnectionLive, type SqliteWriter } from "./sqlite-connection.js"
import { writesEveryTable, writing } from "./write-declaration.js"

/** The migrations, in order; each is static code, never read from disk at run time. */
export const migrations = {
  "0001_platform": migration0001,
  "0002_apps": migration0002,
  "0003_pages": migration0003,
  "0004_sources": migration0004,
  "0005_change_history_fts_keys": migration0005,
  "0006_builder_authoring": migration0006,
  "0007_runs": migration0007,
  "0008_provisioning": migration0008,
  "0009_bonus_credit_adjustments": migration0009,
  "0010_webhooks": migration0010,
  "0011_portal_sign_in": migration0011,
  "0012_credit_renewal": migration0012,
  "0013_mcp_sign_in": migration0013,
  "0014_outbox_claims": migration0014,
  "0015_service_instances": migration0015,
  "0016_agent_default_model": migration0016,
  "0017_search_statistics": migration0017,
  "0018_passage_vectors": migration0018,
  "0019_source_content_claims": migration0019,
  "0020_page_search_filter": migration0020,
  "0021_run_events": migration0021,
  "0022_execution_traces": migration0022,
  "0023_conversation_lists": migration0023,
  "0024_shared_run_state": migration0024,
  "0025_execution_trace_column": migration0025
}

/**
 * Creates a directory and its missing parents one at a time. (Node 20's recursive `mkdirSync`
 * never returns for some paths, such as one under `/proc`; one level at a time fails cleanly.)
 */
export const ensureDirectory = (dir: string): void => {
  const missing: Array<string> = []
  for (let current = resolve(dir); !existsSync(current); current = dirname(current)) {
    missing.unshift(current)
    if (dirname(current) === current) break
  }
  for (const path of missing) mkdirSync(path)
}

/** The database file inside a data directory (defined in `database-file.ts`). */
export { databaseFile }

/** How long a connection waits for another process's write lock. */
export const busyTimeoutMs = 5_000

/**
 * Pages the write-ahead log may hold before a commit copies them back into the database file
 * (SQLite's default is 1,000): a page written by many commits between two checkpoints (an
 * organization's credits, an index's hot leaf) is copied back once, so fewer checkpoints copy and
 * sync less per write (about 15% of an Agent turn's CPU, `docs/performance.md`). The log then
 * grows to about 40 MB on disk under steady writes, and is removed when the last connection closes.
 */
export const walCheckpointPages = 10_000

const configure = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
  yield* sql.unsafe("PRAGMA foreign_keys = ON")
  yield* sql.unsafe("PRAGMA synchronous = NORMAL")
  yield* sql.unsafe(`PRAGMA wal_autocheckpoint = ${walCheckpointPages}`)
  // Migrations write every table (DDL and their own rows): declared so (`write-declaration.ts`).
  yield* writing(writesEveryTable)(Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "schema_migrations" }))
})

/** Opens (creating if needed) the data directory's SQLite database and brings its schema up to date. */
const SqliteDatabaseLive = (dataDir: string): Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient | SqliteWriter, unknown> =>
  Layer.effectDiscard(configure).pipe(
    Layer.provideMerge(
      Layer.unwrapEffect(
        Effect.try({
          try: () => {
            ensureDirectory(dataDir)
            return SqliteConnectionLive({ filename: databaseFile(dataDir), prepareCacheSize: 500 })
          },
          catch: (cause) => cause
        })
      )
    )
  )

/**
 * The service's database, schema up to date: the PostgreSQL database at `url` when it is a
 * `postgres://` URL, else the data directory's SQLite file (created if needed).
 */
export const DatabaseLive = (dataDir: string, url?: string): Layer.Layer<SqlClient.SqlClient | DatabaseBackend, unknown> => {
  if (url !== undefined && url !== "") {
    if (!isPostgresUrl(url)) return Layer.fail(new Error(`unsupported database URL (expected postgres://…): ${maskedDatabaseUrl(url)}`))
    // Loaded only for PostgreSQL: a SQLite data directory (and the CLI's administration) loads no pg.
    return Layer.unwrapEffect(
      Effect.map(
        Effect.promise(() => import("./pg-database.js")),
        ({ PgDatabaseLive }) => PgDatabaseLive(url, migrations)
      )
    )
  }
  return Layer.merge(SqliteDatabaseLive(dataDir), Layer.succeed(DatabaseBackend, { dialect: "sqlite", filename: databaseFile(dataDir) }))
}

/**
 * Write transactions are serializable: on SQLite they run one at a time (one writer); on
 * PostgreSQL each runs at `SERIALIZABLE`, with no lock shared by every write, and one that loses a
 * race with another is run again (`pg-serializable.ts`), so a read-then-write inside a
 * transaction is never interleaved with another instance's, and writes of different rows run in
 * parallel on every instance.
 */
const serializeWrites = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  sql.onDialectOrElse({ pg: () => serializable(sql), orElse: () => Effect.void })

/** `transaction` run again while it loses a race on PostgreSQL (`pg-serializable.ts`). */
const retriedOn = <A, E, R>(sql: SqlClient.SqlClient, transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  sql.onDialectOrElse({ pg: () => retriedWhileLosing(transaction), orElse: () => transaction })

/** Longest a transaction may hold the single connection before it is rolled back. */
export const transactionTimeout = Duration.seconds(5)

/**
 * A runner of short, time-boxed transactions on `sql`; services build one at construction so their
 * methods need nothing from the caller. Callers keep network, model and file I/O out of them.
 */
export const transactionsOn =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    retriedOn(sql, timeBoxed(sql.withTransaction(Effect.zipRight(serializeWrites(sql), effect)))).pipe(
      Effect.catchTag("SqlError", (e) => Effect.die(e))
    ) as Effect.Effect<A, E, R>

/** A transaction that dies (rolled back) once it held the connection longer than {@link transactionTimeout}. */
export const timeBoxed = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  transaction.pipe(
    Effect.timeoutFail({ duration: transactionTimeout, onTimeout: () => new TransactionTimeout() }),
    Effect.catchTag("TransactionTimeout", (e) => Effect.die(e))
  ) as Effect.Effect<A, E, R>

class TransactionTimeout extends Error {
  readonly _tag = "TransactionTimeout"
  override readonly message = "transaction exceeded its time box"
}
