/**
 * Which storage backend the service runs on, provided by `DatabaseLive`: the SQLite file under the
 * data directory (the embedded default) or a PostgreSQL database named by a `postgres://` URL
 * (`--database`, `SVC_DATABASE_URL`). Repositories that need a dialect-specific statement branch on
 * `sql.onDialectOrElse`; the few services that need more (the read fast path, full-text search) read
 * `DatabaseBackend`.
 */
import { Context, type Effect } from "effect"
import type Pg from "pg"

/** The SQL dialects the service runs on. */
export type Dialect = "sqlite" | "pg"

/** The backend in use and what its seams need. */
export type Backend =
  | { readonly dialect: "sqlite"; readonly filename: string }
  | {
      readonly dialect: "pg"
      /** The pool the `SqlClient` runs on; the read fast path shares it. */
      readonly pool: Pg.Pool
      /** A counter that changes after this instance commits a write and when any other instance or process does. */
      readonly dataVersion: () => number
      /**
       * Moves `dataVersion` if any transaction committed anywhere since the last call: run before
       * each request, so a commit acknowledged by any instance is seen by the next request here.
       */
      readonly syncDataVersion: Effect.Effect<void>
    }

/** The backend in use. */
export class DatabaseBackend extends Context.Tag("svc/DatabaseBackend")<DatabaseBackend, Backend>() {}

/** Whether `url` names a PostgreSQL database. */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url)

/** The database URL of `--database`, else `SVC_DATABASE_URL`; undefined means the data directory's SQLite file. */
export const databaseUrlFrom = (option: string | undefined, env: Record<string, string | undefined>): string | undefined =>
  option || env.SVC_DATABASE_URL || undefined

/** The dialect `sql` compiles for (migrations branch on it where a statement has no common form). */
export const dialectOf = (sql: { readonly onDialectOrElse: <A>(options: { readonly pg: () => A; readonly orElse: () => A }) => A }): Dialect =>
  sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })

/** A database URL fit to print: its password, if any, replaced by `***`. */
export const maskedDatabaseUrl = (url: string): string => url.replace(/:[^:@/]*@/, ":***@")
