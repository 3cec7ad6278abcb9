/**
 * One turn at a time per conversation, in this process: a permit per conversation id, held from
 * reading the history until the assistant's message is stored. Entries live only while a turn
 * holds or waits for them.
 */
import { Effect } from "effect"

interface Entry {
  readonly semaphore: Effect.Semaphore
  users: number
}

/** Keyed mutual exclusion for conversation turns. */
export const makeTurnLocks = () => {
  const entries = new Map<string, Entry>()
  const enter = (key: string) =>
    Effect.sync(() => {
      let entry = entries.get(key)
      if (!entry) {
        entry = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        entries.set(key, entry)
      }
      entry.users += 1
      return entry
    })
  const leave = (key: string, entry: Entry) =>
    Effect.sync(() => {
      entry.users -= 1
      if (entry.users === 0) entries.delete(key)
    })
  return {
    /** Runs `effect` while holding `key`'s permit; waiting turns go in arrival order. */
    withLock: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.acquireUseRelease(enter(key), (entry) => entry.semaphore.withPermits(1)(effect), (entry) => leave(key, entry)),
    /** How many conversations are held or waited for (for tests). */
    size: () => entries.size
  }
}
