/**
 * Streamed replies: an operation answering `text/event-stream` (`stream: true`) read as an async
 * iterable of typed events. The server sends `start`, `delta` and `tool` events, then exactly one
 * `done` (the answer the non-streamed call gives) or `error` (the error envelope); the iterator
 * yields the events and ends with `done`, or throws the SDK's error class for the `error`'s code.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { type ErrorClassMap, SvcConnectionError, type SvcError, errorFromResponse } from "./errors.js"

/** A run's first event, sent before the model answers. */
export interface StreamStart {
  readonly type: "start"
  readonly executionId: string
  /** The conversation the turn belongs to (absent for runs outside a conversation). */
  readonly conversation_id?: string | undefined
}

/** Text of the reply as it arrives. */
export interface StreamDelta {
  readonly type: "delta"
  readonly text: string
}

/** A tool the run called. */
export interface StreamTool {
  readonly type: "tool"
  readonly name: string
}

/** The last event: the answer, the same object the non-streamed call answers. */
export interface StreamDone<Done> {
  readonly type: "done"
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

/**
 * A streamed reply: iterate it with `for await` for its events (the last one is `done`), or await
 * `finalAnswer()` for the answer alone. An `error` event throws the error class of its code, with
 * the response's request id and the status the non-streamed call answers for that code (the
 * class's `status`). Iterate it once.
 */
export class ReplyStream<Done> implements AsyncIterable<StreamEvent<Done>> {
  readonly #open: () => Promise<OpenedStream>
  readonly #errorClasses: ErrorClassMap
  #used = false

  constructor(open: () => Promise<OpenedStream>, errorClasses: ErrorClassMap) {
    this.#open = open
    this.#errorClasses = errorClasses
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamEvent<Done>> {
    if (this.#used) throw new TypeError("svc: a streamed reply can be iterated once.")
    this.#used = true
    const response = await this.#open()
    const requestId = response.headers["x-request-id"]
    const pending: Array<EventSourceMessage> = []
    const parser = createParser({ onEvent: (message) => void pending.push(message) })
    const decoder = new TextDecoder()
    for await (const chunk of response.body) {
      parser.feed(decoder.decode(chunk, { stream: true }))
      while (pending.length > 0) {
        const message = pending.shift()!
        const data = parseData(message, requestId)
        switch (message.event) {
          case "start":
            yield { ...data, type: "start" } as StreamStart
            break
          case "delta":
            yield { type: "delta", text: String(data.text ?? "") }
            break
          case "tool":
            yield { type: "tool", name: String(data.name ?? "") }
            break
          case "done":
            yield { type: "done", answer: data as Done }
            return
          case "error":
            throw this.#failure(response, data)
        }
      }
    }
    throw new SvcConnectionError(`The stream ended before its \`done\` or \`error\` event${requestId ? ` (request ${requestId})` : ""}.`)
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
