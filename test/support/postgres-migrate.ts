/** Migrates a PostgreSQL database to the current schema (the test template), then closes it. */
import { Effect, Layer } from "effect"
import { DatabaseLive } from "../../server/platform/sql/database.js"

/** Runs the migrations on the database at `url`. */
export const migrateDatabase = (url: string): Promise<void> =>
  Effect.runPromise(Effect.scoped(Layer.build(DatabaseLive("/nonexistent-data-dir", url))).pipe(Effect.asVoid)) as Promise<void>
