/**
 * The ingestion worker's time in tests: an Effect `TestClock` given to the server as
 * `ingestion.clock`, so the worker's polls and job time limits happen when the test moves the
 * clock, never by waiting in real time.
 */
import { Chunk, Context, Effect, Exit, Layer, Scope, TestClock, TestContext } from "effect"

/** A worker clock a test moves by hand. */
export interface WorkerClock {
  /** Give it to the server: `ingestion: { clock: workerClock.clock }`. */
  readonly clock: TestClock.TestClock
  /** Moves the worker's time on by `ms`: the polls and job time limits now due fire. */
  readonly advance: (ms: number) => Promise<void>
  /**
   * Resolves once the worker is idle: waiting on this clock for a poll due one `pollMs` from now
   * (it has claimed and run every job it could). A job the worker was woken to by an upload in its
   * own process may still run then (its abandoned poll is due at the same time): wait for such a
   * source by reading it. Fails the test after `timeoutMs` of real time.
   */
  readonly idle: (timeoutMs?: number) => Promise<void>
  /** Releases the clock. */
  readonly close: () => Promise<void>
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A fresh `TestClock` (time starts at 0) for a worker polling every `pollMs` (the default 1 s). */
export const makeWorkerClock = async (pollMs = 1_000): Promise<WorkerClock> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(TestContext.TestContext, scope))
  const clock = Context.unsafeGet(context, TestClock.TestClock)
  // Moving the clock once tells it the test drives time (no "not advancing the clock" warning).
  await Effect.runPromise(clock.adjust(0))
  return {
    clock,
    advance: (ms) => Effect.runPromise(clock.adjust(ms)),
    idle: async (timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      const polling = Effect.map(Effect.zip(clock.currentTimeMillis, clock.sleeps), ([now, sleeps]) => Chunk.some(sleeps, (end) => end === now + pollMs))
      while (!(await Effect.runPromise(polling))) {
        if (Date.now() > deadline) throw new Error(`the ingestion worker was not idle within ${timeoutMs} ms`)
        await pause(5)
      }
    },
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
