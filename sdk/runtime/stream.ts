/**
 * Streamed replies: an operation answering `text/event-stream` (`stream: true`) read as an async
 * iterable of typed events. The server sends `start`, `delta` and `tool` events, then exactly one
 * `done` (the answer the non-streamed call gives) or `error` (the error envelope); the iterator
 * yields the events and ends with `done`, or throws the SDK's error class for the `error`'s code.
 * Each event carries an `id` (its position in the run): when the connection breaks before the last
 * event, the iterator reconnects by itself through `GET /executions/{id}/events` with
 * `Last-Event-ID`, so each event is yielded exactly once. Aborting (`options.signal`) or leaving
 * the loop early stops a run this stream started (`POST /executions/{id}/cancel`).
 */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { type ErrorClassMap, SvcConnectionError, type SvcError, errorFromResponse } from "./errors.js"
import { sleep } from "./retry.js"

/** A run's first event, sent before the model answers. */
export interface StreamStart {
  readonly type: "start"
  /** The event's id: its position in the run (1 for `start`). */
  readonly id?: number | undefined
  readonly executionId: string
  /** The conversation the turn belongs to (absent for runs outside a conversation). */
  readonly conversation_id?: string | undefined
}

/** Text of the reply as it arrives. */
export interface StreamDelta {
  readonly type: "delta"
  /** The event's id: its position in the run. */
  readonly id?: number | undefined
  readonly text: string
}

/** A tool the run called. */
export interface StreamTool {
  readonly type: "tool"
  /** The event's id: its position in the run. */
  readonly id?: number | undefined
  readonly name: string
}

/** The last event: the answer, the same object the non-streamed call answers. */
export interface StreamDone<Done> {
  readonly type: "done"
  /** The event's id: its position in the run. */
  readonly id?: number | undefined
  readonly answer: Done
}

/** One event of a streamed reply. */
export type StreamEvent<Done> = StreamStart | StreamDelta | StreamTool | StreamDone<Done>

/** What a streamed call gets from the transport: the status, headers and the body's chunks. */
export interface OpenedStream {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: AsyncIterable<Uint8Array>
}

const parseData = (message: EventSourceMessage, requestId: string | undefined): Record<string, unknown> => {
  try {
    const data: unknown = JSON.parse(message.data)
    if (typeof data === "object" && data !== null) return data as Record<string, unknown>
  } catch {
    // answered below
  }
  throw new SvcConnectionError(`The stream sent an \`${message.event ?? "message"}\` event whose data is not a JSON object${requestId ? ` (request ${requestId})` : ""}.`)
}

/** How a stream goes on after its connection breaks, and what stops its run. */
export interface StreamFollowing {
  /** Opens `GET /executions/{id}/events` after the event `lastEventId` (0: from the start). */
  readonly resume: (executionId: string, lastEventId: number) => Promise<OpenedStream>
  /** Stops the run (a stream that started it, aborted or left early); absent for a follower. */
  readonly cancel?: ((executionId: string) => Promise<void>) | undefined
  /** The execution, when known before its `start` (a stream of `GET /executions/{id}/events`). */
  readonly executionId?: string | undefined
  /** The id of the last event already seen (what a follower resumed after). */
  readonly lastEventId?: number | undefined
  /** The caller's signal: no reconnection once it aborted. */
  readonly signal?: AbortSignal | undefined
}

/** Reconnections in a row without a new event before the stream gives up (then its last connection error is thrown). */
export const maxReconnects = 5

/** The wait before reconnection `n` (1-based): 250 ms, doubling, at most 4 s. */
const reconnectDelayMs = (n: number) => Math.min(4_000, 250 * 2 ** (n - 1))

/** The number an event's `id:` line holds, or undefined. */
const eventIdOf = (message: EventSourceMessage): number | undefined => (message.id !== undefined && /^[0-9]+$/.test(message.id) ? Number(message.id) : undefined)

/**
 * A streamed reply: iterate it with `for await` for its events (the last one is `done`), or await
 * `finalAnswer()` for the answer alone. An `error` event throws the error class of its code, with
 * the response's request id and the status the non-streamed call answers for that code (the
 * class's `status`). A broken connection is resumed from the last event seen (up to
 * `maxReconnects` tries in a row). Iterate it once.
 */
export class ReplyStream<Done> implements AsyncIterable<StreamEvent<Done>> {
  readonly #open: () => Promise<OpenedStream>
  readonly #errorClasses: ErrorClassMap
  readonly #following: StreamFollowing | undefined
  #used = false
  #executionId: string | undefined
  #lastEventId: number

  constructor(open: () => Promise<OpenedStream>, errorClasses: ErrorClassMap, following?: StreamFollowing) {
    this.#open = open
    this.#errorClasses = errorClasses
    this.#following = following
    this.#executionId = following?.executionId
    this.#lastEventId = following?.lastEventId ?? 0
  }

  /** The execution, once known (from `start`, or given). */
  get executionId(): string | undefined {
    return this.#executionId
  }

  /** The id of the last event read (0 before any): what a later `Last-Event-ID` resumes after. */
  get lastEventId(): number {
    return this.#lastEventId
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamEvent<Done>> {
    if (this.#used) throw new TypeError("svc: a streamed reply can be iterated once.")
    this.#used = true
    let ended = false
    let response = await this.#open()
    let reconnects = 0
    try {
      for (;;) {
        const requestId = response.headers["x-request-id"]
        const pending: Array<EventSourceMessage> = []
        const parser = createParser({ onEvent: (message) => void pending.push(message) })
        const decoder = new TextDecoder()
        let broken: SvcConnectionError | undefined
        try {
          for await (const chunk of response.body) {
            parser.feed(decoder.decode(chunk, { stream: true }))
            while (pending.length > 0) {
              const message = pending.shift()!
              const data = parseData(message, requestId)
              const id = eventIdOf(message)
              // An event at or before the last one seen was already yielded (a resumed stream never sends one; this guards it).
              if (id !== undefined && id <= this.#lastEventId) continue
              if (id !== undefined) this.#lastEventId = id
              reconnects = 0
              switch (message.event) {
                case "start":
                  if (typeof data.executionId === "string") this.#executionId = data.executionId
                  yield { ...data, type: "start", id } as StreamStart
                  break
                case "delta":
                  yield { type: "delta", id, text: String(data.text ?? "") }
                  break
                case "tool":
                  yield { type: "tool", id, name: String(data.name ?? "") }
                  break
                case "done":
                  ended = true
                  yield { type: "done", id, answer: data as Done }
                  return
                case "error":
                  ended = true
                  throw this.#failure(response, data)
              }
            }
          }
        } catch (error) {
          if (ended || !(error instanceof SvcConnectionError)) throw error
          broken = error
        }
        const lost = broken ?? new SvcConnectionError(`The stream ended before its \`done\` or \`error\` event${requestId ? ` (request ${requestId})` : ""}.`)
        response = await this.#reconnect(lost, () => ++reconnects)
      }
    } finally {
      const cancel = this.#following?.cancel
      if (!ended && cancel !== undefined && this.#executionId !== undefined) await cancel(this.#executionId).catch(() => undefined)
    }
  }

  /** Opens the run's events after the last one seen, retrying a connection error; throws `lost` when it cannot go on. */
  async #reconnect(lost: SvcConnectionError, nextTry: () => number): Promise<OpenedStream> {
    const following = this.#following
    for (;;) {
      const executionId = this.#executionId
      if (following === undefined || executionId === undefined || following.signal?.aborted) throw lost
      const n = nextTry()
      if (n > maxReconnects) throw lost
      await sleep(reconnectDelayMs(n), following.signal)
      try {
        return await following.resume(executionId, this.#lastEventId)
      } catch (error) {
        if (!(error instanceof SvcConnectionError)) throw error
        lost = error
      }
    }
  }

  /** Reads the whole stream and resolves with the answer of its `done` event. */
  async finalAnswer(): Promise<Done> {
    for await (const event of this) if (event.type === "done") return event.answer
    throw new SvcConnectionError("The stream ended without an answer.")
  }

  #failure(response: OpenedStream, envelope: unknown): SvcError {
    const code = (envelope as { error?: { code?: unknown } }).error?.code
    const ErrorClass = typeof code === "string" && Object.hasOwn(this.#errorClasses, code) ? this.#errorClasses[code] : undefined
    const declared = (ErrorClass as { status?: unknown } | undefined)?.status
    return errorFromResponse(this.#errorClasses, typeof declared === "number" ? declared : response.status, response.headers, envelope)
  }
}
