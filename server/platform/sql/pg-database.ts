/**
 * The PostgreSQL database (`--database postgres://…`): one pool shared by the `SqlClient` and the
 * read fast path, integer and numeric columns read as JavaScript numbers (like SQLite's), the same
 * numbered migrations as SQLite (`pg-ddl.ts`), and the data-version counter (`pg-data-version.ts`)
 * with its change-notification triggers; `BEGIN` and savepoints ride on the statement after them
 * (`pg-deferred-statements.ts`).
 */
import { Migrator, SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import pg from "pg"
import { DatabaseBackend } from "./dialect.js"
import { dataChangedChannel, dataVersionSequence, trackDataVersion, unversionedTables } from "./pg-data-version.js"
import { deferTransactionControl } from "./pg-deferred-statements.js"
import { pgMigrationClient } from "./pg-ddl.js"

/** `int8` (counts, sums, identity keys) and `numeric` read as numbers; every value the service keeps fits. */
const numberTypes = new Set([20, 1700])

const poolConfig = (url: string): pg.PoolConfig => ({
  connectionString: url,
  max: 10,
  application_name: "svc",
  types: {
    getTypeParser: (oid, format) => (numberTypes.has(oid) ? Number : pg.types.getTypeParser(oid, format))
  }
})

/** Advisory lock keys (an arbitrary constant pair per purpose). */
const migrationLock = 7_134_001

/**
 * After the migrations: the `citext` extension, and on every table the statement-level trigger that
 * notifies `dataChangedChannel`, so tables of later migrations get it with no edit. Only what is
 * missing is created: creating a trigger (or an index) locks its table against writes until this
 * transaction ends, and every process that opens the database runs this, a CLI command beside a
 * serving instance included; a lock on each table taken in turn, while a writer holds one table and
 * waits for another, was a deadlock that PostgreSQL broke by failing one of the two.
 */
const installChangeNotifications = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    yield* sql.unsafe(`CREATE OR REPLACE FUNCTION svc_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('${dataChangedChannel}', ''); RETURN NULL; END $$`)
    // The shared rate-limit buckets (pg-rate-limiter.ts): unlogged (no WAL, emptied after a crash,
    // which only restarts every window); counting a request changes no data, so no notification.
    yield* sql`CREATE UNLOGGED TABLE IF NOT EXISTS rate_limit_buckets (
      bucket TEXT PRIMARY KEY, times BIGINT[] NOT NULL, counts BIGINT[] NOT NULL, last_at BIGINT NOT NULL)`
    // The log of one row per request that it replaced.
    const [old] = yield* sql<{ found: string | null }>`SELECT to_regclass('rate_limit_hits')::text AS found`
    if (old?.found) yield* sql`DROP TABLE IF EXISTS rate_limit_hits`
    // The data version's counter, moved after each commit that wrote (pg-data-version.ts).
    yield* sql.unsafe(`CREATE SEQUENCE IF NOT EXISTS ${dataVersionSequence}`)
    // Tables no cache reads (the instances' heartbeats) notify nobody either (an earlier start may have given them a trigger).
    for (const name of unversionedTables) yield* sql.unsafe(`DROP TRIGGER IF EXISTS svc_data_changed ON ${pg.escapeIdentifier(name)}`)
    const tables = yield* sql<{ name: string }>`SELECT c.relname AS name FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname NOT IN ('rate_limit_buckets', 'schema_migrations')
        AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'svc_data_changed')`
    for (const { name } of tables.filter((table) => !unversionedTables.includes(table.name))) {
      yield* sql.unsafe(`CREATE OR REPLACE TRIGGER svc_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${pg.escapeIdentifier(name)}
        FOR EACH STATEMENT EXECUTE FUNCTION svc_data_changed()`)
    }
  })

/** Brings the schema up to date, one instance at a time. */
const migrate = (migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ddl = pgMigrationClient(sql)
    const translated = Object.fromEntries(
      Object.entries(migrations).map(([name, migration]) => [name, Effect.provideService(migration, SqlClient.SqlClient, ddl)])
    )
    yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(${migrationLock})`
        yield* sql`CREATE EXTENSION IF NOT EXISTS citext`
        // The Migrator's own check (a failing \`::regclass\` cast) would abort this transaction.
        yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
          migration_id integer primary key,
          created_at timestamp with time zone not null default now(),
          name text not null
        )`
        yield* Migrator.make({})({ loader: Migrator.fromRecord(translated), table: "schema_migrations" })
        yield* installChangeNotifications(sql)
      })
    )
  })

/** The PostgreSQL database at `url`, migrated, with its `DatabaseBackend`. */
export const PgDatabaseLive = (
  url: string,
  migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Layer.Layer<SqlClient.SqlClient | DatabaseBackend, unknown> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const config = poolConfig(url)
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() => new pg.Pool(config)),
        (pool) => Effect.promise(() => pool.end())
      )
      pool.on("error", () => undefined)
      // Before the data-version watcher wraps each connection, so the watcher sees every statement as sent.
      pool.on("connect", deferTransactionControl)
      const tracker = yield* trackDataVersion(pool, config)
      const client = PgClient.layerFromPool({ acquire: Effect.succeed(pool) as never })
      const backend = Layer.succeed(DatabaseBackend, { dialect: "pg", pool, dataVersion: tracker.dataVersion, syncDataVersion: tracker.sync })
      return Layer.effectDiscard(migrate(migrations)).pipe(Layer.provideMerge(Layer.merge(client, backend)))
    })
  )
