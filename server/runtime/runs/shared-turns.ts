/**
 * The conversation locks and the registry of running turns a `RunService` uses, shared by every
 * instance on one PostgreSQL database (issue 24); on SQLite (one instance) the in-process ones alone.
 *
 * - A turn of a conversation holds the in-process lock (`turn-locks.ts`: this instance's turns of the
 *   conversation in arrival order), then the conversation's lease in the database
 *   (`conversation_locks`, `lease-repo.ts`): a row naming this instance, taken by one conditional
 *   upsert, given back when the turn is recorded. The lease lasts as long as the instance holding it
 *   is alive (its `service_instances` heartbeat is the renewal, no write per turn to keep it): the
 *   lease of a crashed instance is taken over by the next turn once that instance's own lease ran
 *   out (6 s by default), when recovery also fails its execution. A turn that finds the lease taken
 *   waits: it tries again when the holder announces the release (`run-signals.ts`), else after a
 *   pause growing from 10 ms to 250 ms; there is no timeout of its own, as on one instance, and a
 *   caller that goes away stops the wait (waits are interruptible, each attempt is not, so no lease
 *   is left taken by a waiter that left).
 * - A cancel of a turn running here stops it (`running-turns.ts`); of a turn running elsewhere it is
 *   announced on `runCancelChannel` (again every second while it waits) and waits, polling the
 *   execution, until it is recorded finished, for at most `crossInstanceCancelWaitMs`.
 */
import { Effect } from "effect"
import { newId } from "../../platform/ids.js"
import { DatabaseBackend } from "../../platform/sql/dialect.js"
import { LeaseRepo } from "./lease-repo.js"
import { listenForRunSignals } from "./run-signals.js"
import { makeRunningTurns, type RunningTurns } from "./running-turns.js"
import { makeTurnLocks } from "./turn-locks.js"

/** Longest a cancel waits for another instance to record the turn it stopped; then it answers the execution as it is. */
export const crossInstanceCancelWaitMs = 10_000

/** Runs an effect holding a conversation's lock. */
export interface ConversationLocks {
  readonly withLock: <A, E, R>(conversationId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** Resolves after `ms`, or sooner when `conversationId` is announced free; `waiters` holds the wake-ups by conversation. */
const freedOrAfter = (waiters: Map<string, Set<() => void>>, conversationId: string, ms: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const set = waiters.get(conversationId) ?? new Set<() => void>()
    waiters.set(conversationId, set)
    const forget = () => {
      clearTimeout(timer)
      set.delete(wake)
      if (set.size === 0 && waiters.get(conversationId) === set) waiters.delete(conversationId)
    }
    const wake = () => {
      forget()
      resume(Effect.void)
    }
    const timer = setTimeout(wake, ms)
    set.add(wake)
    return Effect.sync(forget)
  })

/** The locks and running turns of this instance's `RunService`. */
export class SharedTurns extends Effect.Service<SharedTurns>()("svc/SharedTurns", {
  scoped: Effect.gen(function* () {
    const backend = yield* DatabaseBackend
    const local = makeTurnLocks()
    const running = makeRunningTurns()
    if (backend.dialect !== "pg") return { locks: local as ConversationLocks, running }
    const leases = yield* LeaseRepo
    const waiters = new Map<string, Set<() => void>>()
    yield* listenForRunSignals(backend.pool, {
      cancel: (executionId) => void Effect.runFork(running.cancel(executionId)),
      freed: (conversationId) => {
        for (const wake of [...(waiters.get(conversationId) ?? [])]) wake()
      }
    })

    /** Takes the lease, waiting (interruptibly, through `restore`) while another instance holds it; answers the hold's token. */
    const takeLease = (conversationId: string, restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
      Effect.gen(function* () {
        const token = newId()
        let pause = 10
        while (!(yield* leases.take(conversationId, token))) {
          yield* restore(freedOrAfter(waiters, conversationId, pause))
          pause = Math.min(pause * 2, 250)
        }
        return token
      })

    const locks: ConversationLocks = {
      withLock: (conversationId, effect) =>
        local.withLock(
          conversationId,
          Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(takeLease(conversationId, restore), (token) => Effect.ensuring(restore(effect), leases.release(conversationId, token)))
          )
        )
    }

    /** Announces the cancel and waits until the execution is recorded finished (or the bound passes); true when it was. */
    const cancelElsewhere = (executionId: string) =>
      Effect.gen(function* () {
        const started = Date.now()
        let announced = 0
        let pause = 10
        while (yield* leases.stillRunning(executionId)) {
          const waited = Date.now() - started
          if (waited >= crossInstanceCancelWaitMs) return false
          if (waited >= announced) {
            yield* leases.askToCancel(executionId)
            announced = waited + 1_000
          }
          yield* Effect.sleep(pause)
          pause = Math.min(pause * 2, 100)
        }
        return true
      })

    const shared: RunningTurns = {
      register: running.register,
      cancel: (executionId) => Effect.flatMap(running.cancel(executionId), (here) => (here ? Effect.succeed(true) : cancelElsewhere(executionId)))
    }
    return { locks, running: shared }
  }),
  dependencies: [LeaseRepo.Default]
}) {}
