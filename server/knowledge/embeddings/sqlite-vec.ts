/**
 * The nearest-neighbour connection on SQLite: a read-only connection of its own to the database file
 * (like `ReadConnection`'s) with the `sqlite-vec` extension loaded, whose `vec_distance_cosine` ranks
 * stored vectors inside SQLite. The extension comes prebuilt from the npm registry for Linux, macOS
 * and Windows on x64 and arm64; where it cannot be loaded (another platform, a build of SQLite
 * without extension loading) the caller scans in JavaScript instead. The schema never depends on it:
 * vectors are plain BLOB columns either way.
 */
import Database from "better-sqlite3"
import { Effect } from "effect"
import { busyTimeoutMs } from "../../platform/sql/database.js"

/** A read-only connection with `sqlite-vec` loaded, or why there is none. */
export type VecConnection =
  | { readonly loaded: true; readonly db: Database.Database; readonly version: string }
  | { readonly loaded: false; readonly reason: string }

/** Opens `filename` read-only and loads `sqlite-vec` into it; closed with the scope. Never fails: a failure is `loaded: false`. */
export const openVecConnection = (filename: string): Effect.Effect<VecConnection, never, import("effect").Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<VecConnection> => {
      let db: Database.Database | undefined
      try {
        const vec = await import("sqlite-vec")
        db = new Database(filename, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs })
        vec.load(db)
        const version = db.prepare("SELECT vec_version()").pluck().get() as string
        return { loaded: true, db, version }
      } catch (error) {
        db?.close()
        return { loaded: false, reason: error instanceof Error ? error.message : String(error) }
      }
    }),
    (connection) => Effect.sync(() => connection.loaded && connection.db.close())
  )
