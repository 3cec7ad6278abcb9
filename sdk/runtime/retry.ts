/** When to retry and how long to wait: exponential backoff with jitter, `Retry-After` on 429. */
import { setTimeout as delay } from "node:timers/promises"

/** First backoff delay and the largest, in milliseconds. */
export const backoff = { initialMs: 500, maxMs: 8_000 } as const

/** The longest `Retry-After` the client waits for, in milliseconds. */
export const maxRetryAfterMs = 60_000

/** Whether a response status is worth another attempt. */
export const isRetryableStatus = (status: number): boolean => status === 429 || status === 500

/** Methods that are safe to repeat after a lost connection, whatever their body. */
const idempotentMethods = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])

/**
 * Whether a request that may have reached the server can be sent again after a connection failure:
 * idempotent methods, and writes that carry an `Idempotency-Key`.
 */
export const canRepeatAfterConnectionError = (method: string, hasIdempotencyKey: boolean): boolean =>
  hasIdempotencyKey || idempotentMethods.has(method.toUpperCase())

/** Milliseconds from a `Retry-After` value (seconds or an HTTP date), or undefined when absent or unreadable. */
export const parseRetryAfter = (value: string | undefined, now = Date.now()): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * How long to wait before retry number `retry` (1-based): the server's `Retry-After` when given
 * (plus a little jitter, never less), else exponential backoff with jitter.
 */
export const retryDelayMs = (retry: number, retryAfterMs: number | undefined, random = Math.random): number => {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, maxRetryAfterMs) + Math.floor(random() * 100)
  const ceiling = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (retry - 1))
  return Math.floor(ceiling * (0.5 + random() / 2))
}

/** Waits, unless the signal aborts first (then rejects with the signal's reason). */
export const sleep = async (ms: number, signal: AbortSignal | undefined): Promise<void> => {
  try {
    await delay(ms, undefined, signal === undefined ? {} : { signal })
  } catch (error) {
    if (signal?.aborted) throw signal.reason
    throw error
  }
}
