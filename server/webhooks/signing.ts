/**
 * Signing of webhook requests (spec: Events): `X-Service-Timestamp` is the unix time in seconds at
 * signing, `X-Service-Signature` is `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<raw body>`
 * with the endpoint's signing secret.
 */
import { createHmac } from "node:crypto"
import { randomToken } from "../platform/ids.js"

/** The header carrying the unix time of signing. */
export const timestampHeader = "X-Service-Timestamp"
/** The header carrying the signature. */
export const signatureHeader = "X-Service-Signature"
/** The header marking a test event sent with `svc portals webhook-test`. */
export const testHeader = "X-Service-Test"

/** The signature header's value for `rawBody` signed at `timestamp` (unix seconds). */
export const signatureOf = (secret: string, timestamp: number, rawBody: string): string =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex")}`

/** A new signing secret: `whsec_` and 40 base62 characters. */
export const newSigningSecret = (): string => `whsec_${randomToken(40)}`
