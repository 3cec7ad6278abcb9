/** Client and per-request options, and how omitted client options are filled in. */
import type { Dispatcher } from "undici"

/** Options of a client; omitted ones come from `SVC_BASE_URL` / `SVC_API_KEY` or the defaults. */
export interface SvcOptions {
  /** `{base_url}`, ending in `/api/v1`. Default: env `SVC_BASE_URL`, else `http://127.0.0.1:8787/api/v1`. */
  readonly baseUrl?: string | undefined
  /** An organization or personal API key. Default: env `SVC_API_KEY`. */
  readonly apiKey?: string | undefined
  /** Retries after the first attempt of a retryable failure. Default 2. */
  readonly maxRetries?: number | undefined
  /** Time limit of one attempt, in milliseconds; 0 disables it. Default 60 000. */
  readonly timeoutMs?: number | undefined
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** An undici dispatcher to send requests through (a proxy, a mock); default a keep-alive `Agent` of the client. */
  readonly dispatcher?: Dispatcher | undefined
}

/** Options of one call. */
export interface RequestOptions {
  /** The `Idempotency-Key` to send; operations that take one get a random UUID otherwise. */
  readonly idempotencyKey?: string | undefined
  /** Aborts the call, retries included. */
  readonly signal?: AbortSignal | undefined
  /** Time limit of each attempt of this call, overriding the client's. */
  readonly timeoutMs?: number | undefined
  /** Retries for this call, overriding the client's. */
  readonly maxRetries?: number | undefined
  /** Extra headers for this call. */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** Client options with every default applied. */
export interface ResolvedOptions {
  readonly baseUrl: string
  readonly apiKey: string
  readonly maxRetries: number
  readonly timeoutMs: number
  readonly headers: Readonly<Record<string, string>>
  readonly dispatcher: Dispatcher | undefined
}

/** The address `svc serve` listens on by default. */
export const defaultBaseUrl = "http://127.0.0.1:8787/api/v1"

/** Applies env variables and defaults; throws when no API key is given either way. */
export const resolveOptions = (options: SvcOptions, env: NodeJS.ProcessEnv = process.env): ResolvedOptions => {
  const apiKey = options.apiKey ?? env.SVC_API_KEY
  if (!apiKey) throw new TypeError("svc: no API key; pass `apiKey` or set SVC_API_KEY.")
  const baseUrl = (options.baseUrl ?? env.SVC_BASE_URL ?? defaultBaseUrl).replace(/\/+$/, "")
  const maxRetries = options.maxRetries ?? 2
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError("svc: `maxRetries` must be a whole number ≥ 0.")
  return {
    baseUrl,
    apiKey,
    maxRetries,
    timeoutMs: options.timeoutMs ?? 60_000,
    headers: options.headers ?? {},
    dispatcher: options.dispatcher
  }
}
