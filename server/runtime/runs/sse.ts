/**
 * A run answered as Server-Sent Events: the turn runs in its own fiber, its events go through a
 * queue to the response body, a keep-alive comment goes out every `keepAliveMs` (15 s by default), and the stream ends with
 * exactly one `done` or `error`. When the client goes away the body stream is interrupted, which
 * interrupts the turn (and through it the model call).
 */
import { HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Fiber, Option, Queue, Schedule, Stream } from "effect"
import { envelopeBody, isApiFailure } from "../../platform/request/error-catalog.js"
import { ServerError } from "../../platform/errors.js"
import type { RunSink } from "./events.js"

const encoder = new TextEncoder()

/** One SSE event. */
export const sseEvent = (event: string, data: unknown): Uint8Array => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

const keepAlive = encoder.encode(": keep-alive\n\n")

interface Frame {
  readonly bytes: Uint8Array
  readonly last: boolean
}

/** The envelope of a turn's failure: an expected failure as it is, anything else `server_error`. */
const errorEnvelope = <E>(cause: Cause.Cause<E>) => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && isApiFailure(failure.value)) return envelopeBody(failure.value)
  return envelopeBody(new ServerError({ message: "The run failed on the server." }))
}

/**
 * Streams `run` (given the sink for its events) as `text/event-stream`: its events as they come,
 * then `done` with its answer or `error` with the envelope of its failure.
 */
export const streamRun = <A, E>(run: (onEvent: RunSink) => Effect.Effect<A, E>, keepAliveMs: number) =>
  Effect.gen(function* () {
    const frames = yield* Queue.unbounded<Frame>()
    const onEvent: RunSink = (event) => {
      const { type, ...data } = event
      return Queue.offer(frames, { bytes: sseEvent(type, data), last: false })
    }
    const turn = yield* Effect.forkDaemon(
      run(onEvent).pipe(
        Effect.matchCauseEffect({
          onSuccess: (answer) => Queue.offer(frames, { bytes: sseEvent("done", answer), last: true }),
          onFailure: (cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.void : Queue.offer(frames, { bytes: sseEvent("error", errorEnvelope(cause)), last: true })
        })
      )
    )
    const events = Stream.fromQueue(frames).pipe(
      Stream.takeUntil((frame) => frame.last),
      Stream.map((frame) => frame.bytes)
    )
    const comments = Stream.repeatEffectWithSchedule(Effect.succeed(keepAlive), Schedule.spaced(keepAliveMs)).pipe(Stream.drop(1))
    const body = Stream.merge(events, comments, { haltStrategy: "left" }).pipe(Stream.ensuring(Fiber.interrupt(turn)))
    return HttpServerResponse.stream(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
