/** One HTTP attempt over undici, with a per-attempt time limit; the response body is read in full. */
import type { Readable } from "node:stream"
import type { OpenedStream } from "./stream.js"
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

/** Reads a body's chunks in full. */
export const readAll = async (body: AsyncIterable<Uint8Array>): Promise<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  for await (const chunk of body) chunks.push(chunk)
  return new Uint8Array(Buffer.concat(chunks))
}

/**
 * Sends one attempt and answers as soon as the headers arrive, the body left to read as it comes.
 * The time limit covers the wait for the headers; the caller's `signal` aborts the body too (the
 * reader then throws the abort reason).
 */
export const openStream = async (attempt: Attempt): Promise<OpenedStream> => {
  const headersTimeout = new AbortController()
  const timer = attempt.timeoutMs > 0 ? setTimeout(() => headersTimeout.abort(), attempt.timeoutMs) : undefined
  const signals = [attempt.signal, headersTimeout.signal].filter((s): s is AbortSignal => s !== undefined)
  try {
    const response = await request(attempt.url, {
      method: attempt.method,
      headers: attempt.headers,
      body: attempt.body ?? null,
      dispatcher: attempt.dispatcher,
      signal: AbortSignal.any(signals)
    })
    clearTimeout(timer)
    const signal = attempt.signal
    const body = response.body
    async function* chunks(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body) yield chunk as Uint8Array
      } catch (error) {
        if (signal?.aborted) throw signal.reason
        const reason = error instanceof Error ? error.message : String(error)
        throw new SvcConnectionError(`The stream from ${new URL(attempt.url).origin} broke: ${reason}`, error)
      } finally {
        if (!body.destroyed) body.destroy()
      }
    }
    return { status: response.statusCode, headers: flattenHeaders(response.headers), body: chunks() }
  } catch (error) {
    clearTimeout(timer)
    if (attempt.signal?.aborted) throw attempt.signal.reason
    if (headersTimeout.signal.aborted) throw new SvcTimeoutError(attempt.timeoutMs)
    const reason = error instanceof Error ? error.message : String(error)
    throw new SvcConnectionError(`Could not reach ${new URL(attempt.url).origin}: ${reason}`, error)
  }
}
