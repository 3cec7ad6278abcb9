/**
 * The first step of every HTTP request, whichever door then answers it (the MCP branch, the fast
 * lane, the API's router, the Portal, the OAuth endpoints): it gets its request id, sent back as
 * `X-Request-Id` on every answer (the response header is set before any door writes), its
 * request-log line, written once when the answer is sent (or with 499 when the client went away),
 * and, on PostgreSQL, the data version brought up to date with commits made anywhere before any
 * door reads a cache (`data-version-sync.ts`). The doors read the id with {@link requestIdOf}
 * instead of making their own, and sync nothing themselves.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { newId } from "../platform/ids.js"
import { logNodeRequest, type RequestLogOptions } from "./request-log.js"

/** A new request id: `req_` and 32 hex digits. */
export const newRequestId = (): string => `req_${newId().replace(/-/g, "")}`

const requestIdKey = Symbol.for("svc/requestId")
type Tagged = { [requestIdKey]?: string }

/**
 * The id the intake gave the request whose Node message is `source` (an Effect request's
 * `source`), or a new one for a request that came another way (a web handler in tests).
 */
export const requestIdOf = (source: unknown): string =>
  (typeof source === "object" && source !== null ? (source as Tagged)[requestIdKey] : undefined) ?? newRequestId()

/** Gives `copy` (a replay of `request`'s body for the API) the request's id. */
export const carryRequestId = <T extends object>(request: IncomingMessage, copy: T): T =>
  Object.assign(copy, { [requestIdKey]: (request as Tagged)[requestIdKey] })

/**
 * The intake of one request: its id, its `X-Request-Id` header and its log line, then `sync` (the
 * data-version sync, absent on SQLite), whose promise the request waits for before any door.
 */
export const intake = (
  request: IncomingMessage,
  response: ServerResponse,
  requestLog: RequestLogOptions | undefined,
  sync: (() => Promise<void>) | undefined
): Promise<void> | undefined => {
  const requestId = newRequestId()
  ;(request as Tagged)[requestIdKey] = requestId
  response.setHeader("x-request-id", requestId)
  logNodeRequest(requestLog, request, response, requestId)
  return sync?.()
}
