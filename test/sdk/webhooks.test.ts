/**
 * The SDK's `verifyWebhook`, on requests signed as the server signs them: accepted within the
 * tolerance, refused when stale, from the future, tampered with, signed with another secret, or
 * missing a header; Node's and the Fetch API's header shapes both work.
 */
import { describe, expect, it } from "vitest"
import { verifyWebhook } from "../../sdk/index.js"
import { signatureOf } from "../../server/webhooks/signing.js"

const secret = "whsec_testsecret"
const body = JSON.stringify({
  event: "end_user.signup",
  toolsetId: "p",
  toolsetName: "Portal",
  organizationId: "o",
  endUser: { id: "u", email: "a@b.c", createdAt: "2026-11-23T00:00:00.000Z", fullName: null },
  timestamp: "2026-11-23T00:00:00.000Z"
})
const now = 1_790_000_000
const signed = (timestamp: number, text = body, key = secret) => ({
  "x-service-timestamp": String(timestamp),
  "x-service-signature": signatureOf(key, timestamp, text)
})

describe("verifyWebhook", () => {
  it("accepts a request signed within the tolerance and answers the typed event", () => {
    const result = verifyWebhook(body, signed(now - 299), secret, { now })
    expect(result).toEqual({ ok: true, event: JSON.parse(body), timestamp: now - 299 })
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(signed(now)), secret, { now }).ok).toBe(true)
  })

  it("refuses stale and future timestamps, with a configurable tolerance", () => {
    expect(verifyWebhook(body, signed(now - 301), secret, { now })).toMatchObject({ ok: false, reason: "stale_timestamp" })
    expect(verifyWebhook(body, signed(now + 301), secret, { now })).toMatchObject({ ok: false, reason: "future_timestamp" })
    expect(verifyWebhook(body, signed(now - 301), secret, { now, toleranceSeconds: 600 }).ok).toBe(true)
  })

  it("refuses a changed body, another secret, a changed timestamp and missing or malformed headers", () => {
    expect(verifyWebhook(body.replace("a@b.c", "x@b.c"), signed(now), secret, { now })).toMatchObject({ ok: false, reason: "bad_signature" })
    expect(verifyWebhook(body, signed(now, body, "whsec_other"), secret, { now })).toMatchObject({ ok: false, reason: "bad_signature" })
    expect(verifyWebhook(body, { ...signed(now), "x-service-timestamp": String(now - 1) }, secret, { now })).toMatchObject({ ok: false, reason: "bad_signature" })
    expect(verifyWebhook(body, { "x-service-timestamp": String(now) }, secret, { now })).toMatchObject({ ok: false, reason: "missing_header" })
    expect(verifyWebhook(body, { ...signed(now), "x-service-signature": "sha256=zz" }, secret, { now })).toMatchObject({ ok: false, reason: "malformed_header" })
    expect(verifyWebhook(body, { ...signed(now), "x-service-timestamp": "soon" }, secret, { now })).toMatchObject({ ok: false, reason: "malformed_header" })
  })

  it("refuses a correctly signed body that is no end_user.signup event", () => {
    const other = JSON.stringify({ event: "something.else" })
    expect(verifyWebhook(other, signed(now, other), secret, { now })).toMatchObject({ ok: false, reason: "malformed_body" })
  })
})
