/**
 * What a failed request to an OpenAI-compatible provider means for the runtime: whether it is
 * worth another attempt (429, 5xx, no connection, no answer in time), how long the provider asked
 * to wait, and a description fit for a `run_failed` message, from which the API key is removed.
 */
import OpenAI from "openai"

/** A provider failure as the retry policy sees it. */
export interface ProviderFailure {
  readonly retryable: boolean
  /** Completes "The model provider …". */
  readonly description: string
  /** What `Retry-After` (or `retry-after-ms`) asked for, in milliseconds. */
  readonly retryAfterMs: number | undefined
}

const maxDetailChars = 200

/** `text` without the API key (plain or URL-encoded) or any bearer token. */
export const redact = (text: string, apiKey: string | undefined): string => {
  let out = text
  if (apiKey !== undefined && apiKey !== "") {
    for (const form of new Set([apiKey, encodeURIComponent(apiKey)])) out = out.split(form).join("[redacted]")
  }
  return out.replace(/(bearer\s+)\S+/gi, "$1[redacted]")
}

/** The wait a response's `retry-after-ms` or `Retry-After` (seconds or an HTTP date) asks for. */
export const retryAfterMs = (headers: Headers | undefined, now: number): number | undefined => {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = headers?.get("retry-after")?.trim()
  if (value === undefined || value === "") return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

const detailOf = (message: string, apiKey: string | undefined) => {
  const flat = redact(message, apiKey).replace(/\s+/g, " ").trim()
  return flat.length > maxDetailChars ? `${flat.slice(0, maxDetailChars - 1)}…` : flat
}

/** How the runtime reads `error`, thrown by the `openai` client while opening a request. */
export const classifyProviderError = (error: unknown, apiKey: string | undefined, now: number): ProviderFailure => {
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return { retryable: true, description: "did not answer in time", retryAfterMs: undefined }
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return { retryable: true, description: "could not be reached", retryAfterMs: undefined }
  }
  if (error instanceof OpenAI.APIError && typeof error.status === "number") {
    const status = error.status
    const detail = detailOf(error.message.replace(/^\d{3}\s*/, ""), apiKey)
    return {
      retryable: status === 429 || status >= 500,
      description: `answered ${status}${detail === "" ? "" : ` (${detail})`}`,
      retryAfterMs: retryAfterMs(error.headers, now)
    }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { retryable: false, description: `failed (${detailOf(message, apiKey)})`, retryAfterMs: undefined }
}

/** A description of an error thrown while reading a provider's stream. */
export const describeStreamError = (error: unknown, apiKey: string | undefined): string =>
  detailOf(error instanceof Error ? error.message : String(error), apiKey)
