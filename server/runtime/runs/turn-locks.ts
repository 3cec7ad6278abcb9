/**
 * One turn at a time per conversation, in this process: a lock per conversation id, held from
 * reading the history until the assistant's message is stored. A free lock is taken at once, with
 * no semaphore; waiting turns queue in arrival order and are handed the lock one by one. Entries
 * live only while a turn holds or waits for them.
 */
import { Deferred, Effect, Exit, FiberId } from "effect"

/** A held lock and the turns waiting for it, in arrival order. */
interface Entry {
  readonly waiting: Array<Deferred.Deferred<void>>
}

/** Keyed mutual exclusion for conversation turns. */
export const makeTurnLocks = () => {
  const entries = new Map<string, Entry>()

  /** Hands `key`'s lock to the next waiting turn, or frees it. */
  const release = (key: string) => {
    const entry = entries.get(key)
    if (entry === undefined) return
    const next = entry.waiting.shift()
    if (next === undefined) entries.delete(key)
    else Deferred.unsafeDone(next, Exit.void)
  }

  /** Waits to be handed `key`'s lock; a waiter interrupted after it was handed the lock passes it on. */
  const wait = (key: string, entry: Entry): Effect.Effect<void> => {
    const handed = Deferred.unsafeMake<void>(FiberId.none)
    entry.waiting.push(handed)
    return Effect.onInterrupt(Deferred.await(handed), () =>
      Effect.sync(() => {
        const at = entry.waiting.indexOf(handed)
        if (at >= 0) entry.waiting.splice(at, 1)
        else release(key)
      })
    )
  }

  return {
    /** Runs `effect` while holding `key`'s lock; waiting turns go in arrival order. */
    withLock: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          const held = Effect.ensuring(restore(effect), Effect.sync(() => release(key)))
          const entry = entries.get(key)
          if (entry !== undefined) return Effect.zipRight(restore(wait(key, entry)), held)
          entries.set(key, { waiting: [] })
          return held
        })
      ),
    /** How many conversations are held or waited for (for tests). */
    size: () => entries.size
  }
}
