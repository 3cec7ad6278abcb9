/**
 * Following a run's events (`GET /executions/{id}/events`): the stored events after an id, then
 * the run live until its final `done` or `error`. The table is the source, so a follower on any
 * instance sees the run: it reads again every `eventPollMs` while nothing new arrived, or at once
 * when this instance stores events of the run. A run that finished without its final event stored
 * (its instance was killed and recovery finished it) ends, after `finalEventGraceMs`, with an
 * `error` made from the execution's record. Knows nothing of HTTP.
 */
import { Chunk, Effect, Option, Stream } from "effect"
import type { Principal } from "../../identity/domain.js"
import { InsufficientScope, NotFound, RunCancelled, RunFailed, ServerError } from "../../platform/errors.js"
import { envelopeBody } from "../../platform/request/error-catalog.js"
import type { ExecutionKind } from "./domain.js"
import type { NumberedEvent } from "./event-log.js"
import { RunEventLog } from "./event-log.js"
import { RunEventRepo, type StoredRunEvent } from "./event-repo.js"
import { type ExecutionRow, RunRepo } from "./repo.js"
import { runSettingsOrDefaults } from "./settings.js"

/** The scope that reads an execution's events: its kind's `:execute` (a transaction is an App's). */
export const eventScopeOf = {
  agent: "agents:execute",
  flow: "flows:execute",
  app: "apps:execute",
  transaction: "apps:execute"
} as const satisfies Record<ExecutionKind, string>

interface FollowState {
  /** The id of the last event answered. */
  readonly last: number
  /** When the follower first saw the run finished without its final event (wall clock: waits are real time), else null. */
  readonly finishedSince: number | null
  readonly ended: boolean
}

const numbered = (event: StoredRunEvent): NumberedEvent => ({
  id: event.seq,
  event: event.event,
  json: event.data,
  last: event.event === "done" || event.event === "error"
})

/** The final `error` of a run that finished without its final event stored, from its record. */
const synthesizedFinal = (row: ExecutionRow, id: number): NumberedEvent => {
  const message = row.error ?? "The run ended without its final event; read its record with GET /executions/{id}."
  const failure =
    row.status === "cancelled"
      ? new RunCancelled({ message })
      : row.status === "failed"
        ? new RunFailed({ message })
        : new ServerError({ message: "The run finished but its final event was not kept; read its record with GET /executions/{id}." })
  return { id, event: "error", json: JSON.stringify(envelopeBody(failure)), last: true }
}

/** Reads and follows runs' events. */
export class RunEventFeed extends Effect.Service<RunEventFeed>()("svc/RunEventFeed", {
  effect: Effect.gen(function* () {
    const runs = yield* RunRepo
    const events = yield* RunEventRepo
    const log = yield* RunEventLog
    const settings = yield* runSettingsOrDefaults
    const notKept = (id: string) =>
      new NotFound({
        message: `The execution '${id}' has no events kept: only streamed and detached runs record them, for 24 hours after they ran.`
      })

    /** The next events after `state.last`, waiting while there are none; none at all once the run ended. */
    const step = (executionId: string, org: string, state: FollowState): Effect.Effect<Option.Option<readonly [Chunk.Chunk<NumberedEvent>, FollowState]>> =>
      Effect.gen(function* () {
        if (state.ended) return Option.none()
        let current = state
        for (;;) {
          const found = yield* events.after(executionId, current.last)
          if (found.length > 0) {
            const answered = found.map(numbered)
            const ended = answered.some((event) => event.last)
            const kept = ended ? answered.slice(0, answered.findIndex((event) => event.last) + 1) : answered
            return Option.some([Chunk.unsafeFromArray(kept), { last: kept.at(-1)!.id, finishedSince: null, ended }] as const)
          }
          const row = yield* runs.execution(org, executionId)
          if (row === null) return Option.none()
          if (row.status !== "running") {
            // Resumed after the final event: nothing is left to answer.
            const final = yield* events.finalSeq(executionId)
            if (final !== null && final <= current.last) return Option.none()
            const since = current.finishedSince ?? Date.now()
            if (Date.now() - since >= settings.finalEventGraceMs) {
              return Option.some([Chunk.of(synthesizedFinal(row, current.last + 1)), { ...current, ended: true }] as const)
            }
            current = { ...current, finishedSince: since }
          }
          yield* log.waitForEvents(executionId, settings.eventPollMs)
        }
      })

    return {
      /**
       * The events of an execution of the caller's organization after the id `after` (0: from the
       * start), then live until its final event. `not_found` for another organization's id or an
       * execution with no events kept; `insufficient_scope` without its kind's `:execute` scope.
       */
      follow: (actor: Principal, executionId: string, after: number): Effect.Effect<Stream.Stream<NumberedEvent>, NotFound | InsufficientScope> =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const row = yield* runs.execution(org, executionId)
          if (row === null) return yield* new NotFound({ message: `No execution '${executionId}' in this organization.` })
          const needed = eventScopeOf[row.kind]
          if (!actor.scopes.has(needed)) return yield* new InsufficientScope({ message: `Reading this execution's events needs the scope '${needed}'.` })
          if (!(yield* events.any(executionId))) {
            // A streamed run stores its first events within `eventFlushMs`; a run answered whole never does.
            if (row.status !== "running") return yield* notKept(executionId)
            const deadline = Date.now() + settings.finalEventGraceMs
            while (!(yield* events.any(executionId))) {
              if (Date.now() >= deadline) return yield* notKept(executionId)
              yield* log.waitForEvents(executionId, settings.eventPollMs)
            }
          }
          return Stream.unfoldChunkEffect<FollowState, NumberedEvent, never, never>({ last: after, finishedSince: null, ended: false }, (state) =>
            step(executionId, org, state)
          )
        })
    }
  }),
  dependencies: [RunRepo.Default, RunEventRepo.Default, RunEventLog.Default]
}) {}
