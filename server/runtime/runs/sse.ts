/**
 * Runs answered as Server-Sent Events, and runs that outlive their connection. A streamed run runs
 * in a fiber of the run event log (`event-log.ts`), not the request's: each event gets an `id:`
 * and is stored, then goes through a queue to the response body; a keep-alive comment goes out
 * every `keepAliveMs` (15 s by default), and the stream ends with exactly one `done` or `error`.
 * When the client goes away the response ends and the run goes on to its end (followed again with
 * `GET /executions/{id}/events`). A detached run (`detach: true`) answers 202 once it started.
 */
import { HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Exit, Option, Queue, Schedule, Stream } from "effect"
import { envelopeBody, isApiFailure } from "../../platform/request/error-catalog.js"
import { InvalidRequest, RunFailed, ServerError } from "../../platform/errors.js"
import { parsedEventId } from "./event-api.js"
import { type FinalEventOf, type NumberedEvent, RunEventLog } from "./event-log.js"
import type { RunSink } from "./events.js"
import { stoppedByServer } from "./reasons.js"

const encoder = new TextEncoder()

/** One SSE event, its data already JSON, with its `id:` when it has one. */
export const sseFrame = (id: number | null, event: string, json: string): Uint8Array =>
  encoder.encode(`${id === null ? "" : `id: ${id}\n`}event: ${event}\ndata: ${json}\n\n`)

/** One SSE event without an id. */
export const sseEvent = (event: string, data: unknown): Uint8Array => sseFrame(null, event, JSON.stringify(data))

const keepAlive = encoder.encode(": keep-alive\n\n")
const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/** The envelope of a run's failure: an expected failure as it is, a stop by the closing server `run_failed`, anything else `server_error`. */
const errorEnvelope = <E>(cause: Cause.Cause<E>) => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && isApiFailure(failure.value)) return envelopeBody(failure.value)
  if (Cause.isInterruptedOnly(cause)) return envelopeBody(new RunFailed({ message: stoppedByServer }))
  return envelopeBody(new ServerError({ message: "The run failed on the server." }))
}

/** A run's final event: `done` with its answer, or `error` with the envelope of its failure. */
const finalEvent = <A, E>(exit: Exit.Exit<A, E>): ReturnType<FinalEventOf<A, E>> =>
  Exit.isSuccess(exit) ? { event: "done", data: exit.value } : { event: "error", data: errorEnvelope(exit.cause) }

/** `events` (ending with the final one) as a `text/event-stream` body, keep-alive comments between them. */
const eventStream = (events: Stream.Stream<NumberedEvent>, keepAliveMs: number) => {
  const frames = events.pipe(
    Stream.takeUntil((event) => event.last),
    Stream.map((event) => sseFrame(event.id, event.event, event.json))
  )
  const comments = Stream.repeatEffectWithSchedule(Effect.succeed(keepAlive), Schedule.spaced(keepAliveMs)).pipe(Stream.drop(1))
  return HttpServerResponse.stream(Stream.merge(frames, comments, { haltStrategy: "left" }), { contentType: "text/event-stream", headers: sseHeaders })
}

/**
 * Streams `run` (given the sink for its events) as `text/event-stream`: its events as they come,
 * each with its id, then `done` with its answer or `error` with the envelope of its failure. The
 * run goes on if the client goes away.
 */
export const streamRun = <A, E>(run: (onEvent: RunSink) => Effect.Effect<A, E>, keepAliveMs: number) =>
  Effect.gen(function* () {
    const log = yield* RunEventLog
    const queue = yield* Queue.unbounded<NumberedEvent>()
    let listening = true
    yield* log.start(run, finalEvent, (event) => (listening ? Queue.offer(queue, event) : Effect.void))
    const events = Stream.fromQueue(queue).pipe(Stream.ensuring(Effect.sync(() => void (listening = false))))
    return eventStream(events, keepAliveMs)
  })

/**
 * Starts `run` detached: 202 `{executionId, conversation_id?}` once it began (its credit reserved,
 * its execution `running`); it runs to its end with nobody listening, its events recorded. A
 * refusal before it began fails as the run would.
 */
export const detachRun = <A, E>(run: (onEvent: RunSink) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const log = yield* RunEventLog
    const started = yield* log.start(run, finalEvent, () => Effect.void)
    return HttpServerResponse.unsafeJson(yield* started, { status: 202 })
  })

/** A followed run's events (`RunEventFeed.follow`) as `text/event-stream`. */
export const followedRun = (events: Stream.Stream<NumberedEvent>, keepAliveMs: number) => eventStream(events, keepAliveMs)

/** `detach` and `stream` together are refused (400): a run answers as a stream or as 202, not both. */
export const oneAnswer = (body: { readonly stream?: boolean | undefined; readonly detach?: boolean | undefined }): Effect.Effect<void, InvalidRequest> =>
  body.stream === true && body.detach === true
    ? Effect.fail(new InvalidRequest({ message: "detach and stream cannot both be true: a detached run answers 202 and is followed with GET /executions/{id}/events." }))
    : Effect.void

/** The id to resume after: `Last-Event-ID`, else `?after`, else 0 (from the start); 400 when it is not a whole number. */
export const resumedAfter = (header: string | undefined, query: string | undefined): Effect.Effect<number, InvalidRequest> => {
  const given = header ?? query
  if (given === undefined) return Effect.succeed(0)
  const after = parsedEventId(given)
  return after === null
    ? Effect.fail(new InvalidRequest({ message: `${header !== undefined ? "Last-Event-ID" : "after"} must be the id of an event: a whole number.` }))
    : Effect.succeed(after)
}
