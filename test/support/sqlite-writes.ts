/**
 * The set-up of the tests of SQLite writes (write declarations, the writer's transaction): a temp
 * data directory for the file's tests, and a runner of an effect on its database with
 * `WriteTransactions` over the database layer.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { DatabaseLive } from "../../server/platform/sql/database.js"
import type { SqliteWriter } from "../../server/platform/sql/sqlite-connection.js"
import { WriteTransactions } from "../../server/platform/sql/write-fast-path.js"

/** What an effect run by `SqliteWriteSuite.run` may use. */
export type SqliteWriteServices = WriteTransactions | SqlClient.SqlClient | SqliteWriter

/** A file's data directory and how to run an effect on its database. */
export interface SqliteWriteSuite {
  /** The data directory (created before all the file's tests, removed after them). */
  readonly dataDir: () => string
  /** Runs `body` on the data directory's database (a scope of its own; failures are defects). */
  readonly run: <A>(body: Effect.Effect<A, unknown, SqliteWriteServices>) => Promise<A>
}

/** Registers a temp data directory named from `prefix` for the file's tests; answers it and the runner on its database. */
export const sqliteWriteSuite = (prefix: string): SqliteWriteSuite => {
  let created: string | undefined
  beforeAll(() => {
    created = mkdtempSync(join(tmpdir(), prefix))
  })
  afterAll(() => {
    if (created !== undefined) rmSync(created, { recursive: true, force: true })
  })
  const dataDir = (): string => {
    if (created === undefined) throw new Error("the data directory is made before all the file's tests")
    return created
  }
  const run = <A>(body: Effect.Effect<A, unknown, SqliteWriteServices>): Promise<A> =>
    Effect.runPromise(
      body.pipe(
        Effect.provide(
          WriteTransactions.Default.pipe(Layer.provideMerge(DatabaseLive(dataDir()) as Layer.Layer<SqlClient.SqlClient | SqliteWriter, unknown>))
        ),
        Effect.scoped,
        Effect.orDie
      )
    )
  return { dataDir, run }
}
