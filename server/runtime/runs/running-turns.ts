/**
 * The turns running in this process, by execution id. The answering part of a turn runs in a fiber
 * of its own (`stoppable`), which a cancel request interrupts; the cancel then waits until the
 * execution is recorded as finished. One fork per turn rather than a race with a cancel signal: a
 * race forks two fibers and needs a signal made for every turn.
 */
import { Deferred, Effect, Exit, Fiber, FiberId } from "effect"

/** Runs `effect` so that a cancel request stops it; it then fails with what `onCancel` gives. */
export type Stoppable = <A, E, R, C>(effect: Effect.Effect<A, E, R>, onCancel: () => C) => Effect.Effect<A, E | C, R>

/** The registry of running turns. */
export interface RunningTurns {
  /** Runs `turn` registered under `executionId`, given how to make its answering part stoppable; unregistered after it ends. */
  readonly register: <A, E, R>(executionId: string, turn: (stoppable: Stoppable) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Stops the turn of `executionId` and waits until it is recorded; false when none runs here. */
  readonly cancel: (executionId: string) => Effect.Effect<boolean>
}

interface RunningTurn {
  fiber: Fiber.RuntimeFiber<unknown, unknown> | null
  cancelled: boolean
  finished: Deferred.Deferred<void> | null
}

/** A registry of running turns for one service instance. */
export const makeRunningTurns = (): RunningTurns => {
  const running = new Map<string, RunningTurn>()
  return {
    register: (executionId, turn) =>
      Effect.suspend(() => {
        const entry: RunningTurn = { fiber: null, cancelled: false, finished: null }
        running.set(executionId, entry)
        const stoppable: Stoppable = <A2, E2, R2, C>(effect: Effect.Effect<A2, E2, R2>, onCancel: () => C): Effect.Effect<A2, E2 | C, R2> =>
          Effect.suspend(() => {
            if (entry.cancelled) return Effect.fail(onCancel())
            return Effect.flatMap(Effect.fork(Effect.interruptible(effect)), (fiber) => {
              entry.fiber = fiber
              return Fiber.await(fiber).pipe(
                Effect.onInterrupt(() => Fiber.interrupt(fiber)),
                Effect.flatMap((exit): Effect.Effect<A2, E2 | C> => (entry.cancelled && Exit.isInterrupted(exit) ? Effect.fail(onCancel()) : exit))
              )
            })
          })
        return Effect.ensuring(
          turn(stoppable),
          Effect.suspend(() => {
            running.delete(executionId)
            return entry.finished === null ? Effect.void : Deferred.succeed(entry.finished, undefined)
          })
        )
      }),
    cancel: (executionId) =>
      Effect.suspend(() => {
        const entry = running.get(executionId)
        if (entry === undefined) return Effect.succeed(false)
        entry.cancelled = true
        const finished = (entry.finished ??= Deferred.unsafeMake<void>(FiberId.none))
        return (entry.fiber === null ? Effect.void : Fiber.interruptFork(entry.fiber)).pipe(Effect.zipRight(Deferred.await(finished)), Effect.as(true))
      })
  }
}
