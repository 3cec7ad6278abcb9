/** Shared response building for handlers: encoded JSON, projected lists and idempotent creates. */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Exit, Schema } from "effect"
import { CurrentPrincipal } from "./authentication.js"
import type { Conflict, InvalidRequest } from "../errors.js"
import { sha256Hex } from "../ids.js"
import { IdempotencyStore } from "../idempotency.js"
import { envelopeBody, isApiFailure, statusOfTag } from "./error-catalog.js"

/** Headers of the creates that take `Idempotency-Key`. */
export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
      description: "Any unique string up to 64 characters; a retry with the same key within 24 hours replays the first response.",
      message: () => "Idempotency-Key must be 1 to 64 characters"
    })
  )
})

/** A JSON response of `body` already in its encoded form. */
export const jsonResponse = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  jsonTextResponse(status, JSON.stringify(body), headers)

/** A JSON response of text that is already JSON. */
export const jsonTextResponse = (status: number, text: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.raw(text, {
    status,
    headers,
    contentType: "application/json",
    contentLength: Buffer.byteLength(text)
  })

/** Encodes `value` with `schema` into a JSON response. */
export const encodeJson =
  <A, I>(schema: Schema.Schema<A, I>, status = 200) =>
  (value: A) =>
    Effect.map(Effect.orDie(Schema.encode(schema)(value)), (body) => jsonResponse(status, body))

/** A stable JSON text of a value: object keys sorted at every level. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v
  )

/** What an idempotent create produced: a status and an encoded body. */
export interface Created {
  readonly status: number
  readonly body: unknown
}

/**
 * Runs a create under the request's `Idempotency-Key`, if any. The request is fingerprinted by its
 * JSON body as sent (keys sorted, so formatting does not matter). The first response (success or
 * expected failure) is stored and replayed with `Idempotent-Replayed: true`; server faults release
 * the key so the retry runs again.
 */
export const idempotentCreate = <E, R>(
  input: {
    readonly key: string | undefined
    readonly request: HttpServerRequest.HttpServerRequest
    /** The decoded body, fingerprinted when the raw body is not JSON (multipart uploads). */
    readonly payload: unknown
  },
  create: Effect.Effect<Created, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | InvalidRequest | Conflict, R | CurrentPrincipal | IdempotencyStore> =>
  Effect.gen(function* () {
    if (input.key === undefined) {
      const created = yield* create
      return jsonResponse(created.status, created.body)
    }
    const key = input.key
    const principal = yield* CurrentPrincipal
    const store = yield* IdempotencyStore
    const org = principal.organization.id
    const address = `${input.request.method} ${input.request.url.split("?")[0]}`
    const sent = (input.request.headers["content-type"] ?? "").includes("json")
      ? yield* Effect.orElseSucceed(input.request.json, () => input.payload)
      : input.payload
    const claim = yield* store.claim(org, address, key, sha256Hex(canonicalJson(sent)))
    if (claim._tag === "Replay") {
      return HttpServerResponse.text(claim.body, {
        status: claim.status,
        contentType: "application/json",
        headers: { "idempotent-replayed": "true" }
      })
    }
    const exit = yield* Effect.exit(create)
    if (Exit.isSuccess(exit)) {
      const body = JSON.stringify(exit.value.body)
      yield* store.complete(org, address, key, exit.value.status, body)
      return HttpServerResponse.text(body, { status: exit.value.status, contentType: "application/json" })
    }
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    const status = isApiFailure(failure) ? (statusOfTag.get(failure._tag) ?? 500) : 500
    if (isApiFailure(failure) && status < 500) {
      yield* store.complete(org, address, key, status, JSON.stringify(envelopeBody(failure)))
    } else {
      yield* store.release(org, address, key)
    }
    return yield* Effect.failCause(exit.cause)
  })
