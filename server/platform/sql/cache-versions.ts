/**
 * Versions for caches of query results, by the tables each cache reads (the SQLite seam of cache
 * invalidation). A version changes when another connection or process commits anything and when
 * a commit of this process wrote one of the cache's tables (`write-tracking.ts`), so a create of a
 * Knowledgebase leaves the credentials cached while a key revoked by the API or the CLI fails on
 * the very next request.
 *
 * Other commits are seen on the read connection's `PRAGMA data_version`, which moves with every
 * commit of any other connection, this process's writer included. A change of it counts as
 * another's commit unless this process's writer made it: each commit of a transaction that wrote
 * is observed while the writer holds the write lock (no other connection can commit then), so
 * the reading just before it takes in everything committed until then and the reading just after
 * it only this commit. Everything else (a change seen between two readings) counts as another's.
 *
 * Without the SQLite writer (PostgreSQL) the version is the backend's own data version
 * (`pg-data-version.ts`): it moves with any commit of any instance, whatever the tables.
 */
import { Effect, Option } from "effect"
import { ReadConnection } from "./read-connection.js"
import { SqliteWriter } from "./sqlite-connection.js"

/** A version reading: equal readings mean nothing the cache depends on was committed between them. */
export type CacheVersion = () => number

/** Cache versions over the tables a cache reads. */
export class CacheVersions extends Effect.Service<CacheVersions>()("svc/CacheVersions", {
  effect: Effect.gen(function* () {
    const sqliteWriter = yield* Effect.serviceOption(SqliteWriter)
    const reader = yield* ReadConnection
    if (Option.isNone(sqliteWriter)) {
      return { of: (_tables: ReadonlyArray<string>): CacheVersion => () => reader.dataVersion() }
    }
    const writer = sqliteWriter.value
    let accountedFor = reader.dataVersion()
    let othersEpoch = 0
    const others = (): number => {
      const version = reader.dataVersion()
      if (version !== accountedFor) {
        accountedFor = version
        othersEpoch++
      }
      return othersEpoch
    }
    writer.generations.observeCommits({
      beforeCommit: () => {
        others()
      },
      afterCommit: () => {
        accountedFor = reader.dataVersion()
      }
    })
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
