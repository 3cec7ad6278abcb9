/**
 * A cache of query results that stay true while nothing commits: each entry is tagged with the
 * `PRAGMA data_version` read before its query ran, and is reused only while that version still
 * holds. An entry filled after a concurrent commit (its query may have read the state before the
 * commit) therefore carries the old version and is never served: a revoked key fails on the very
 * next request.
 */
import { Effect } from "effect"

/** Values by key, each valid only at the data version read before it was loaded. */
export interface DataVersionCache<K, V> {
  /**
   * The value of `key` loaded at the current data version, or `load`'s result, kept under the
   * version read before `load` ran when `keep` allows.
   */
  readonly get: <E, R>(key: K, load: Effect.Effect<V, E, R>, keep?: (value: V) => boolean) => Effect.Effect<V, E, R>
}

/**
 * A cache of at most `capacity` entries over `dataVersion` (`CacheVersions.of`, or
 * `ReadConnection.dataVersion`); while it reads `null` every `get` loads and nothing is kept.
 */
export const dataVersionCache = <K, V>(dataVersion: () => number | null, capacity: number): DataVersionCache<K, V> => {
  const entries = new Map<K, { readonly version: number; readonly value: V }>()
  let seenVersion = -1
  return {
    get: (key, load, keep = () => true) =>
      Effect.suspend(() => {
        const version = dataVersion()
        if (version === null) return load
        if (version !== seenVersion) {
          entries.clear()
          seenVersion = version
        }
        const entry = entries.get(key)
        if (entry !== undefined && entry.version === version) return Effect.succeed(entry.value)
        return Effect.tap(load, (value) => {
          if (!keep(value)) return
          entries.delete(key)
          if (entries.size >= capacity) entries.delete(entries.keys().next().value!)
          entries.set(key, { version, value })
        })
      })
  }
}
