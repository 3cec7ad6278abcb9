/**
 * One delivery attempt: the fixed body POSTed to the endpoint, signed at the moment it is sent,
 * through the SSRF-safe fetch (public addresses and this machine's loopback; other private ranges
 * only with `--allow-private-urls`), no redirects followed, within the attempt's time limit. A
 * 2xx answer delivers; anything else is recorded with its status or error.
 */
import { Clock, Effect } from "effect"
import { isPublicOrLoopback } from "../platform/net/address-policy.js"
import { FetchRefused, safeFetchEffect } from "../platform/net/safe-fetch.js"
import { signatureHeader, signatureOf, testHeader, timestampHeader } from "./signing.js"

/** What one attempt came to. */
export interface AttemptOutcome {
  readonly delivered: boolean
  readonly statusCode: number | null
  readonly error: string | null
  readonly durationMs: number
}

/** The User-Agent of webhook requests. */
export const webhookUserAgent = "svc-webhooks/1 (+end_user.signup)"

/** Sends `body` to `url` once, signed with `secret`. Never fails: a refusal is an outcome. */
export const sendSigned = (request: {
  readonly url: string
  readonly secret: string
  readonly body: string
  readonly test: boolean
  readonly allowPrivate: boolean
  readonly timeoutMs: number
}): Effect.Effect<AttemptOutcome> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const timestamp = Math.floor(started / 1000)
    const result = yield* Effect.either(
      safeFetchEffect(request.url, {
        allowPrivate: request.allowPrivate,
        classify: isPublicOrLoopback,
        loopbackNames: true,
        maxBytes: 1024 * 1024,
        timeoutMs: request.timeoutMs,
        maxRedirects: 0,
        userAgent: webhookUserAgent,
        send: {
          method: "POST",
          headers: {
            "content-type": "application/json",
            [timestampHeader]: String(timestamp),
            [signatureHeader]: signatureOf(request.secret, timestamp, request.body),
            ...(request.test ? { [testHeader]: "true" } : {})
          },
          body: request.body
        }
      })
    )
    const durationMs = (yield* Clock.currentTimeMillis) - started
    if (result._tag === "Right") return { delivered: true, statusCode: result.right.status, error: null, durationMs }
    const refusal: FetchRefused = result.left
    return { delivered: false, statusCode: refusal.status ?? null, error: refusal.message, durationMs }
  })
