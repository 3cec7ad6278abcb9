/**
 * Errors the SDK throws. Every error answered by the API becomes an instance of `SvcError` (or of the
 * generated subclass for its `code`); transport failures become `SvcConnectionError`.
 */

/** What an `SvcError` is made of. */
export interface SvcErrorInit {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly requestId?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly cause?: unknown
}

/** A failed call. Branch on `code` (stable) or on the subclass; `message` is for people. */
export class SvcError extends Error {
  /** HTTP status, or 0 when no response arrived. */
  readonly status: number
  /** The stable error code from `{error:{code}}`, e.g. `not_found`. */
  readonly code: string
  /** The response's `X-Request-Id`; quote it when reporting a problem. */
  readonly requestId: string | undefined
  /** Response headers, lower-cased names. */
  readonly headers: Readonly<Record<string, string>>

  constructor(init: SvcErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = new.target.name
    this.status = init.status
    this.code = init.code
    this.requestId = init.requestId
    this.headers = init.headers ?? {}
  }
}

/** No usable response: the connection failed, was reset, or the request timed out. */
export class SvcConnectionError extends SvcError {
  constructor(message: string, cause?: unknown, code = "connection_error") {
    super({ status: 0, code, message, cause })
  }
}

/** The request did not complete within `timeoutMs`. */
export class SvcTimeoutError extends SvcConnectionError {
  constructor(timeoutMs: number) {
    super(`The request timed out after ${timeoutMs} ms.`, undefined, "timeout")
  }
}

/** A constructor of `SvcError` or of one of its subclasses. */
export type SvcErrorClass = new (init: SvcErrorInit) => SvcError

/** Error classes by `code`; codes not in the map become a plain `SvcError`. */
export type ErrorClassMap = Readonly<Record<string, SvcErrorClass>>

const envelopeOf = (body: unknown): { code: string; message: string } | undefined => {
  if (typeof body !== "object" || body === null || !("error" in body)) return undefined
  const error: unknown = body.error
  if (typeof error !== "object" || error === null) return undefined
  const code = "code" in error && typeof error.code === "string" ? error.code : undefined
  const message = "message" in error && typeof error.message === "string" ? error.message : undefined
  return code === undefined ? undefined : { code, message: message ?? code }
}

/** The error for a non-2xx response, chosen by the `code` of its `{error:{code,message}}` body. */
export const errorFromResponse = (
  classes: ErrorClassMap,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: unknown
): SvcError => {
  const envelope = envelopeOf(body)
  const code = envelope?.code ?? `http_${status}`
  const message = envelope?.message ?? `The API answered HTTP ${status} without an error envelope.`
  const ErrorClass = Object.hasOwn(classes, code) ? (classes[code] ?? SvcError) : SvcError
  return new ErrorClass({ status, code, message, requestId: headers["x-request-id"], headers })
}
