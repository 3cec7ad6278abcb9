/**
 * Verifying the service's signup webhook on the receiving side: the signature is HMAC-SHA256 over
 * `<X-Service-Timestamp>.<raw body>` with the endpoint's signing secret, sent as
 * `X-Service-Signature: sha256=<hex>`. Compare over the exact raw bytes received, in constant time,
 * and refuse timestamps outside the tolerance (stale or from the future).
 *
 * ```ts
 * const result = verifyWebhook(rawBody, request.headers, process.env.SVC_WEBHOOK_SECRET!)
 * if (!result.ok) return reply.status(400).send(result.message)
 * console.log(result.event.endUser.email)
 * ```
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/** The `end_user.signup` event. */
export interface SignupEvent {
  readonly event: "end_user.signup"
  /** The Portal's id (for a sign-in at the Portal itself). */
  readonly toolsetId: string
  /** The Portal's name. */
  readonly toolsetName: string
  readonly organizationId: string
  readonly endUser: { readonly id: string; readonly email: string; readonly createdAt: string; readonly fullName: string | null }
  /** ISO 8601 with milliseconds. */
  readonly timestamp: string
  /** True on a test event sent with `svc portals webhook-test`. */
  readonly test?: boolean
}

/** Why a webhook was refused. */
export type WebhookRefusal = "missing_header" | "malformed_header" | "bad_signature" | "stale_timestamp" | "future_timestamp" | "malformed_body"

/** What `verifyWebhook` concluded. */
export type WebhookVerification =
  | { readonly ok: true; readonly event: SignupEvent; readonly timestamp: number }
  | { readonly ok: false; readonly reason: WebhookRefusal; readonly message: string }

/** Headers as Node (`IncomingHttpHeaders`), the Fetch API (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** Options of `verifyWebhook`. */
export interface VerifyWebhookOptions {
  /** Largest difference between the signing time and now, in seconds (default 300). */
  readonly toleranceSeconds?: number
  /** The current unix time in seconds (default: the system clock); for tests. */
  readonly now?: number
}

const headerOf = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined
  const record = headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name.toLowerCase())
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value[0] : (value as string | undefined)
}

const refuse = (reason: WebhookRefusal, message: string): WebhookVerification => ({ ok: false, reason, message })

/**
 * Checks a webhook request: both headers present, the timestamp within `toleranceSeconds` of now
 * (both ways), the signature equal (constant-time) to HMAC-SHA256 over `<timestamp>.<rawBody>`, and
 * the body an `end_user.signup` event. `rawBody` must be the bytes received, before any JSON parsing.
 */
export const verifyWebhook = (
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {}
): WebhookVerification => {
  const tolerance = options.toleranceSeconds ?? 300
  const stamp = headerOf(headers, "x-service-timestamp")
  const signature = headerOf(headers, "x-service-signature")
  if (stamp === undefined || signature === undefined) {
    return refuse("missing_header", "The request lacks X-Service-Timestamp or X-Service-Signature.")
  }
  if (!/^\d{1,12}$/.test(stamp.trim())) return refuse("malformed_header", "X-Service-Timestamp is not unix seconds.")
  const timestamp = Number(stamp.trim())
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (timestamp < now - tolerance) return refuse("stale_timestamp", `The timestamp is more than ${tolerance} s old.`)
  if (timestamp > now + tolerance) return refuse("future_timestamp", `The timestamp is more than ${tolerance} s in the future.`)
  const match = /^sha256=([0-9a-f]{64})$/i.exec(signature.trim())
  if (match === null) return refuse("malformed_header", "X-Service-Signature is not sha256=<64 hex digits>.")
  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody)
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest()
  if (!timingSafeEqual(expected, Buffer.from(match[1]!, "hex"))) return refuse("bad_signature", "The signature does not match the body.")
  let event: unknown
  try {
    event = JSON.parse(body.toString("utf8"))
  } catch {
    return refuse("malformed_body", "The body is not JSON.")
  }
  if (typeof event !== "object" || event === null || (event as { event?: unknown }).event !== "end_user.signup") {
    return refuse("malformed_body", "The body is not an end_user.signup event.")
  }
  return { ok: true, event: event as SignupEvent, timestamp }
}
