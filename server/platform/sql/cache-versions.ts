/**
 * Versions for caches of query results, by the tables each cache reads (the SQLite seam of cache
 * invalidation). A version changes when another connection or process commits anything (the
 * writer connection's own `PRAGMA data_version`, which its own commits leave alone) and when a
 * commit of this process wrote one of the tables (`write-tracking.ts`), so a create of a
 * Knowledgebase leaves the credentials cached while a key revoked by the API or the CLI fails on
 * the very next request. While an `@effect/sql` transaction is open on the writer its
 * `data_version` cannot see other commits, so the version is then `null`: the cache is not used.
 */
import { Effect } from "effect"
import { SqliteWriter } from "./sqlite-connection.js"

/** A version reading: equal readings mean nothing the cache depends on was committed between them. */
export type CacheVersion = () => number | null

/** Cache versions over the tables a cache reads. */
export class CacheVersions extends Effect.Service<CacheVersions>()("svc/CacheVersions", {
  effect: Effect.gen(function* () {
    const writer = yield* SqliteWriter
    const dataVersion = writer.db.prepare("PRAGMA data_version").pluck()
    let externalSeen: unknown = undefined
    let externalEpoch = 0
    const external = (): number => {
      const version = dataVersion.get()
      if (version !== externalSeen) {
        externalSeen = version
        externalEpoch++
      }
      return externalEpoch
    }
    return {
      /** A version that changes with any other process's commit and this process's writes to `tables`. */
      of: (tables: ReadonlyArray<string>): CacheVersion => {
        const names = tables.map((table) => table.toLowerCase())
        let seenEpoch = -1
        let seenGeneration = -1
        let version = 0
        return () => {
          if (writer.db.inTransaction) return null
          const epoch = external()
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
  })
}) {}
