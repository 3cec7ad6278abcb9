/**
 * The outermost HTTP middleware on PostgreSQL: before every request (API, MCP, Portal) the data
 * version is brought up to date with commits made anywhere (`Backend.syncDataVersion`), so caches
 * keyed on it never serve a request what another instance changed before it arrived. On SQLite
 * `PRAGMA data_version` is already exact and nothing runs.
 */
import type { HttpApp } from "@effect/platform"
import { Effect } from "effect"
import { DatabaseBackend } from "../sql/dialect.js"

/** Brings the data version up to date on PostgreSQL; nothing on SQLite. For branches outside the HTTP app (MCP). */
export const syncDataVersion: Effect.Effect<void, never, DatabaseBackend> = Effect.flatMap(DatabaseBackend, (backend) =>
  backend.dialect === "pg" ? backend.syncDataVersion : Effect.void
)

/** Wraps the whole HTTP app (pass to `HttpApiBuilder.serve`). */
export const syncDataVersionFirst = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | DatabaseBackend> =>
  Effect.zipRight(syncDataVersion, app)
