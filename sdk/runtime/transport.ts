/** One HTTP attempt over undici, with a per-attempt time limit; the response body is read in full. */
import type { Readable } from "node:stream"
import { type Dispatcher, request } from "undici"
import { SvcConnectionError, SvcTimeoutError } from "./errors.js"

/** A request as the transport sends it. */
export interface Attempt {
  readonly url: string
  readonly method: Dispatcher.HttpMethod
  readonly headers: Readonly<Record<string, string>>
  /** A `Readable` is consumed by this attempt (a retry needs a new one). */
  readonly body: string | Readable | undefined
  readonly dispatcher: Dispatcher
  readonly timeoutMs: number
  readonly signal: AbortSignal | undefined
}

/** A response with its body read. */
export interface RawResponse {
  readonly status: number
  /** Lower-cased names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

const flattenHeaders = (headers: Record<string, string | string[] | undefined>): Record<string, string> => {
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value
  }
  return flat
}

/**
 * Sends one attempt. Throws the caller's abort reason when `signal` aborts, `SvcTimeoutError` when the
 * time limit passes, and `SvcConnectionError` for any other transport failure.
 */
export const send = async (attempt: Attempt): Promise<RawResponse> => {
  const timeout = attempt.timeoutMs > 0 ? AbortSignal.timeout(attempt.timeoutMs) : undefined
  const signals = [attempt.signal, timeout].filter((s): s is AbortSignal => s !== undefined)
  const signal = signals.length === 0 ? undefined : AbortSignal.any(signals)
  try {
    const response = await request(attempt.url, {
      method: attempt.method,
      headers: attempt.headers,
      body: attempt.body ?? null,
      dispatcher: attempt.dispatcher,
      ...(signal === undefined ? {} : { signal })
    })
    const body = new Uint8Array(await response.body.arrayBuffer())
    return { status: response.statusCode, headers: flattenHeaders(response.headers), body }
  } catch (error) {
    if (attempt.signal?.aborted) throw attempt.signal.reason
    if (timeout?.aborted) throw new SvcTimeoutError(attempt.timeoutMs)
    const reason = error instanceof Error ? error.message : String(error)
    throw new SvcConnectionError(`Could not reach ${new URL(attempt.url).origin}: ${reason}`, error)
  }
}
