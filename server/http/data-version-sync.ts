/**
 * The data-version sync on PostgreSQL: before a request, the data version is brought up to date
 * with commits made anywhere (`Backend.syncDataVersion`), so caches keyed on it never serve a
 * request what another instance or process changed before it arrived. HTTP requests get it from
 * their intake (`request-intake.ts`), whichever door answers them; `svc mcp` over stdio, which has
 * no intake, runs it before each message. On SQLite `PRAGMA data_version` is already exact and
 * nothing runs.
 */
import { Effect } from "effect"
import { type Backend, DatabaseBackend } from "../platform/sql/dialect.js"

/** Brings the data version up to date on PostgreSQL; nothing on SQLite. */
export const syncDataVersion: Effect.Effect<void, never, DatabaseBackend> = Effect.flatMap(DatabaseBackend, (backend) =>
  backend.dialect === "pg" ? backend.syncDataVersion : Effect.void
)

/** The sync as a promise for the HTTP intake; undefined on SQLite, where requests go on at once. */
export const dataVersionSyncOf = (backend: Backend): (() => Promise<void>) | undefined => {
  if (backend.dialect !== "pg") return undefined
  const sync = backend.syncDataVersion
  return () => Effect.runPromise(sync)
}
