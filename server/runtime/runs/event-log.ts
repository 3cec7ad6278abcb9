/**
 * The event log of runs that outlive their connection (streamed and detached runs, issue 25): each
 * event gets its id (its 1-based position in the run) and is stored in `run_events` outside any
 * transaction of the run but the first: `start` is stored by the run with its execution (so a run
 * that has events has its first before its model is asked), the others batched `eventFlushMs`
 * apart, the final one at once; followers on this instance are woken by each store. The runs
 * themselves run in fibers this service owns, not the request's: a client that goes away leaves
 * them running, and a closing server waits `drainMs` for them before it stops the rest (recorded
 * `failed`). Knows nothing of HTTP: the final event's data is given by the caller.
 */
import { Cause, Deferred, Effect, Exit, Fiber } from "effect"
import { AppClock } from "../../platform/clock.js"
import { RunEventRepo, type StoredRunEvent } from "./event-repo.js"
import { RunInterruption, type RunSink, stoppedByServerOutcome } from "./events.js"
import { runSettingsOrDefaults } from "./settings.js"

/** One event of a run as it was sent and stored. */
export interface NumberedEvent {
  /** The event's id: its 1-based position in the run. */
  readonly id: number
  readonly event: string
  /** Its data as JSON text. */
  readonly json: string
  /** `done` or `error`: the run's last event. */
  readonly last: boolean
}

/** The final event of a run, from how it ended. */
export type FinalEventOf<A, E> = (exit: Exit.Exit<A, E>) => { readonly event: "done" | "error"; readonly data: unknown }

/** What `start` says: the execution and, in a conversation, the conversation. */
export interface RunStarted {
  readonly executionId: string
  readonly conversation_id?: string
}

/** Run events, stored and followed. */
export class RunEventLog extends Effect.Service<RunEventLog>()("svc/RunEventLog", {
  scoped: Effect.gen(function* () {
    const repo = yield* RunEventRepo
    const clock = yield* AppClock
    const settings = yield* runSettingsOrDefaults
    const waiting = new Map<string, Set<() => void>>()
    const runs = new Set<Fiber.RuntimeFiber<unknown, unknown>>()

    /** Wakes this instance's followers of `executionId`. */
    const wake = (executionId: string) => {
      const wakers = waiting.get(executionId)
      if (wakers === undefined) return
      waiting.delete(executionId)
      for (const resume of wakers) resume()
    }

    /** Numbers a run's events and stores them in batches, in order. */
    const recorder = () => {
      let seq = 0
      let executionId: string | null = null
      let pending: Array<StoredRunEvent> = []
      let scheduled = false
      const lock = Effect.unsafeMakeSemaphore(1)
      const flush = lock.withPermits(1)(
        Effect.suspend(() => {
          const batch = pending
          pending = []
          const id = executionId
          if (batch.length === 0 || id === null) return Effect.void
          return repo.append(id, batch, clock.now()).pipe(
            Effect.tap(() => Effect.sync(() => wake(id))),
            Effect.catchAllCause((cause) => Effect.logWarning("run events were not stored", Cause.pretty(cause)))
          )
        })
      )
      const later = Effect.delay(
        Effect.suspend(() => {
          scheduled = false
          return flush
        }),
        settings.eventFlushMs
      )
      return (event: string, data: unknown): Effect.Effect<NumberedEvent> =>
        Effect.suspend(() => {
          const numbered: NumberedEvent = { id: ++seq, event, json: JSON.stringify(data), last: event === "done" || event === "error" }
          // The run stored its `start` with its execution (`storesEvents`): followers may read it now.
          if (event === "start") {
            const id = (executionId = (data as RunStarted).executionId)
            return Effect.sync(() => {
              wake(id)
              return numbered
            })
          }
          // Before `start` there is no execution (a refusal): the event is sent, not stored.
          if (executionId === null) return Effect.succeed(numbered)
          pending.push({ seq: numbered.id, event, data: numbered.json })
          // `done`/`error` at once.
          if (numbered.last) return Effect.as(flush, numbered)
          if (scheduled) return Effect.succeed(numbered)
          scheduled = true
          return Effect.as(Effect.forkDaemon(later), numbered)
        })
    }

    // Closing: the runs still going get `drainMs` to finish, then are stopped (recorded `failed`).
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        const going = [...runs]
        if (going.length === 0) return Effect.void
        // Interruptible: a finalizer runs uninterruptibly, where a timeout could not stop the wait it races.
        const waited = Effect.ignore(Effect.timeout(Effect.interruptible(Fiber.awaitAll(going)), settings.drainMs))
        // Stopped runs record themselves `failed`; that too is waited for at most `drainMs`, so a close never hangs on one.
        return Effect.zipRight(waited, Effect.zipRight(Effect.forEach(going, Fiber.interruptFork, { discard: true }), waited))
      })
    )

    /**
     * Starts `run` in a fiber of this service, its events numbered, stored and handed to `listen`
     * (awaited, in order), ending with the final event `finalOf` makes of its exit. Answers at once
     * with an effect that waits for the run's `start` and answers what it said (a run that fails
     * before it starts, a refusal, fails it with its error). Interrupting the caller does not stop
     * the run.
     */
    const start = <A, E>(
      run: (onEvent: RunSink) => Effect.Effect<A, E>,
      finalOf: FinalEventOf<A, E>,
      listen: (event: NumberedEvent) => Effect.Effect<void>
    ): Effect.Effect<Effect.Effect<RunStarted, E>> =>
      Effect.gen(function* () {
        const record = recorder()
        const started = yield* Deferred.make<RunStarted, E>()
        const onEvent: RunSink = Object.assign((event: Parameters<RunSink>[0]) => {
          const { type, ...data } = event
          return Effect.flatMap(record(type, data), (numbered) =>
            type === "start" ? Effect.zipRight(Deferred.succeed(started, data as RunStarted), listen(numbered)) : listen(numbered)
          )
        }, { storesEvents: true })
        const recorded = Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(Effect.exit(restore(run(onEvent))), (exit) => {
            const final = finalOf(exit)
            return Effect.zipRight(
              Exit.isFailure(exit) ? Deferred.failCause(started, exit.cause) : Effect.void,
              Effect.flatMap(record(final.event, final.data), listen)
            )
          })
        )
        const fiber = yield* Effect.forkDaemon(Effect.locally(recorded, RunInterruption, stoppedByServerOutcome))
        runs.add(fiber)
        fiber.addObserver(() => runs.delete(fiber))
        return Deferred.await(started)
      })

    return {
      start,

      /** Waits until this instance stores events of `executionId`, or `ms` passed. */
      waitForEvents: (executionId: string, ms: number): Effect.Effect<void> =>
        Effect.async<void>((resume) => {
          let wakers = waiting.get(executionId)
          if (wakers === undefined) waiting.set(executionId, (wakers = new Set()))
          const set = wakers
          const done = () => {
            clearTimeout(timer)
            set.delete(done)
            if (set.size === 0 && waiting.get(executionId) === set) waiting.delete(executionId)
            resume(Effect.void)
          }
          const timer = setTimeout(done, ms)
          set.add(done)
          return Effect.sync(() => {
            clearTimeout(timer)
            set.delete(done)
            if (set.size === 0 && waiting.get(executionId) === set) waiting.delete(executionId)
          })
        }),

      /** Deletes the events kept longer than `eventsKeptMs`. */
      sweep: Effect.suspend(() => repo.sweep(clock.now() - settings.eventsKeptMs)),

      /** How many streamed or detached runs this instance is running. */
      running: Effect.sync(() => runs.size)
    }
  }),
  dependencies: [RunEventRepo.Default]
}) {}
