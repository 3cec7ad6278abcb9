/** Databases as an earlier schema left them, for the tests of a migration that keeps existing data. */
import { Migrator, type SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import { DatabaseLive, databaseFile, migrations } from "../../server/platform/sql/database.js"

/** Runs `effect` on `dataDir`'s database as the migrations named before `first` left it. */
export const onSchemaBefore =
  (dataDir: string, first: string) =>
  <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>): Promise<A> =>
    Effect.runPromise(
      Effect.gen(function* () {
        const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < first))
        yield* Migrator.make({})({ loader: Migrator.fromRecord(before), table: "schema_migrations" })
        return yield* effect
      }).pipe(Effect.provide(SqliteClient.layer({ filename: databaseFile(dataDir) })), Effect.scoped)
    )

/** Runs `effect` on `dataDir`'s database opened as the server opens it (every migration applied). */
export const onCurrentSchema =
  (dataDir: string) =>
  <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>): Promise<A> =>
    Effect.runPromise(effect.pipe(Effect.provide(Layer.orDie(DatabaseLive(dataDir))), Effect.scoped))
