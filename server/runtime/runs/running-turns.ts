/**
 * The turns running in this process, by execution id: a cancel request signals one, and waits until
 * its execution is recorded as finished.
 */
import { Deferred, Effect } from "effect"

/** A running turn: `cancelled` is completed by a cancel request, `finished` once the execution is recorded. */
export interface RunningTurn {
  readonly cancelled: Deferred.Deferred<void>
  readonly finished: Deferred.Deferred<void>
}

/** The registry of running turns. */
export interface RunningTurns {
  /** Runs `turn` registered under `executionId`, given the signal of a cancel request; unregistered after it ends. */
  readonly register: <A, E, R>(
    executionId: string,
    turn: (cancelled: Deferred.Deferred<void>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  /** Signals the turn of `executionId` to stop and waits until it is recorded; false when none runs here. */
  readonly cancel: (executionId: string) => Effect.Effect<boolean>
}

/** A registry of running turns for one service instance. */
export const makeRunningTurns = (): RunningTurns => {
  const running = new Map<string, RunningTurn>()
  return {
    register: (executionId, turn) =>
      Effect.gen(function* () {
        const entry: RunningTurn = { cancelled: yield* Deferred.make<void>(), finished: yield* Deferred.make<void>() }
        running.set(executionId, entry)
        return yield* turn(entry.cancelled).pipe(
          Effect.ensuring(
            Effect.suspend(() => {
              running.delete(executionId)
              return Deferred.succeed(entry.finished, undefined)
            })
          )
        )
      }),
    cancel: (executionId) =>
      Effect.suspend(() => {
        const entry = running.get(executionId)
        if (entry === undefined) return Effect.succeed(false)
        return Deferred.succeed(entry.cancelled, undefined).pipe(Effect.zipRight(Deferred.await(entry.finished)), Effect.as(true))
      })
  }
}
