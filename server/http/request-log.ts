/**
 * The request log of `svc serve`: one line per request with its method, path (never the query string),
 * status, duration in milliseconds and request id. Nothing else of a request is written: no headers (so
 * never an Authorization header or a key), no query values, no bodies. JSON Lines or a readable line.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

const answeredInPlaceKey = Symbol.for("svc/answeredInPlace")

/**
 * Notes that `response`'s request was answered on its socket in its place, with `status` (Node's
 * own answers, `protocol-errors.ts`: a 408 while its body was arriving), for its log line.
 */
export const noteAnsweredInPlace = (response: object, status: number): void => {
  ;(response as { [answeredInPlaceKey]?: number })[answeredInPlaceKey] = status
}

const answeredInPlace = (response: object): number | undefined => (response as { [answeredInPlaceKey]?: number })[answeredInPlaceKey]

/** `json`: one JSON object per line; `text`: `<time> <method> <path> <status> <ms>ms <request id>`. */
export type RequestLogFormat = "json" | "text"

/** Where and how request lines are written. */
export interface RequestLogOptions {
  readonly format: RequestLogFormat
  /** Takes one line, without its newline. */
  readonly write: (line: string) => void
}

/** What one line says about a request. */
export interface RequestLogEntry {
  readonly time: string
  readonly method: string
  readonly path: string
  /** The answer's status; 499 when the client went away before it, 500 when no answer was made. */
  readonly status: number
  readonly durationMs: number
  readonly requestId: string | null
}

/** One line for `entry` in `format`. */
export const requestLogLine = (entry: RequestLogEntry, format: RequestLogFormat): string =>
  format === "json"
    ? JSON.stringify(entry)
    : `${entry.time} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs}ms ${entry.requestId ?? "-"}`

/** The path of a request target without its query string or fragment. */
const pathOf = (url: string): string => url.replace(/[?#].*$/s, "") || "/"

/**
 * The request line of a request (written by its intake, `request-intake.ts`, whichever door
 * answers it), with the `requestId` its answer carries (`started`: when the request came, by `performance.now()`): written when the answer is sent, or with 499 when the client went away before it (also while its request was still arriving: `protocol-errors.ts`). Nothing when `options`
 * is undefined.
 */
export const logNodeRequest = (
  options: RequestLogOptions | undefined,
  request: IncomingMessage,
  response: ServerResponse,
  requestId: string,
  started = performance.now()
): void => {
  if (options === undefined) return
  response.once("close", () => {
    const entry: RequestLogEntry = {
      time: new Date().toISOString(),
      method: request.method ?? "GET",
      path: pathOf(request.url ?? "/"),
      status: response.writableFinished ? response.statusCode : (answeredInPlace(response) ?? 499),
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      requestId
    }
    options.write(requestLogLine(entry, options.format))
  })
}
