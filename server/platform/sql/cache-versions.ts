/**
 * Versions for caches of query results, by the tables each cache reads (the SQLite seam of cache
 * invalidation). A version changes when another connection or process commits anything and when
 * a commit of this process wrote one of the cache's tables (`write-tracking.ts`), so a create of a
 * Knowledgebase leaves the credentials cached while a key revoked by the CLI (another process)
 * fails on the very next request.
 *
 * Other commits are seen on the writer connection's own `PRAGMA data_version`: SQLite moves it with
 * every commit of any other connection and never with the connection's own, so this process's
 * commits need no reading around them (they are told apart by the write tracking). The read
 * connection never commits. One reading costs a read transaction's locks (about 5 µs); a request
 * takes one per cache it consults.
 *
 * Without the SQLite writer (PostgreSQL) the version is the backend's own data version
 * (`pg-data-version.ts`): it moves with any commit of any instance, whatever the tables.
 */
import type Database from "better-sqlite3"
import { Effect, Option } from "effect"
import { ReadConnection } from "./read-connection.js"
import { SqliteWriter } from "./sqlite-connection.js"

/** A version reading: equal readings mean nothing the cache depends on was committed between them. */
export type CacheVersion = () => number

/**
 * A counter that moves with every commit of another connection to `db`'s database: its `PRAGMA
 * data_version`, counted as a change whenever the reading cannot be taken (the connection busy
 * with an open iterator), so a cache is never kept on a guess.
 */
const othersCommits = (db: Database.Database): (() => number) => {
  const reading = db.prepare("PRAGMA data_version").pluck()
  let last: unknown = reading.get()
  let epoch = 0
  return () => {
    let now: unknown
    try {
      now = reading.get()
    } catch {
      now = Symbol("unread")
    }
    if (now !== last) {
      last = now
      epoch++
    }
    return epoch
  }
}

/** Cache versions over the tables a cache reads. */
export class CacheVersions extends Effect.Service<CacheVersions>()("svc/CacheVersions", {
  effect: Effect.gen(function* () {
    const sqliteWriter = yield* Effect.serviceOption(SqliteWriter)
    const reader = yield* ReadConnection
    if (Option.isNone(sqliteWriter)) {
      return { of: (_tables: ReadonlyArray<string>): CacheVersion => () => reader.dataVersion() }
    }
    const writer = sqliteWriter.value
    const others = othersCommits(writer.db)
    return {
      /** A version that changes with any other connection's commit and this process's writes to `tables`. */
      of: (tables: ReadonlyArray<string>): CacheVersion => {
        const names = tables.map((table) => table.toLowerCase())
        let seenEpoch = -1
        let seenGeneration = -1
        let version = 0
        return () => {
          const epoch = others()
          const generation = writer.generations.generationOf(names)
          if (epoch !== seenEpoch || generation !== seenGeneration) {
            seenEpoch = epoch
            seenGeneration = generation
            version++
          }
          return version
        }
      }
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
