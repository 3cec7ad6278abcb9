/** Shared response building for handlers: idempotent creates and the answers they store. */
import { HttpApiSchema, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Exit, Schema } from "effect"
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

/** A stable JSON text of a value: object keys sorted at every level. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v
  )

/** What an idempotent create answered: a status and an encoded body. */
export interface Created {
  readonly status: number
  readonly body: unknown
}

/**
 * Encodes a value the way its endpoint answers it: with the first declared success schema that
 * encodes it, and that success's status. Idempotent creates store this answer for replays.
 */
export const declaredAnswer = (successSchema: Schema.Schema<any, unknown, any>) => {
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, successSchema)
  const encoders = Array.from(members, (member) => ({
    status: HttpApiSchema.getStatusSuccess(member),
    encode: Schema.encodeEither(member as Schema.Schema<unknown, unknown, never>)
  }))
  return (value: unknown): Effect.Effect<Created> => {
    for (const { status, encode } of encoders) {
      const encoded = encode(value)
      if (Either.isRight(encoded)) return Effect.succeed({ status, body: encoded.right })
    }
    return Effect.dieMessage("A created value matches none of its endpoint's success schemas.")
  }
}

/**
 * Runs a create under the request's `Idempotency-Key`, if any. The request is fingerprinted by its
 * JSON body as sent (keys sorted, so formatting does not matter). The first response (success or
 * expected failure) is stored and replayed with `Idempotent-Replayed: true`; server faults release
 * the key so the retry runs again. The created value is answered as it is, for the endpoint's
 * declared success schema to encode; `answer` (see `declaredAnswer`) gives the stored form.
 */
export const idempotentCreate = <A, E, R>(
  input: {
    readonly key: string | undefined
    readonly request: HttpServerRequest.HttpServerRequest
    /** The decoded body, fingerprinted when the raw body is not JSON (multipart uploads). */
    readonly payload: unknown
  },
  create: Effect.Effect<A, E, R>,
  answer: (created: A) => Effect.Effect<Created>
): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E | InvalidRequest | Conflict, R | CurrentPrincipal | IdempotencyStore> =>
  Effect.gen(function* () {
    if (input.key === undefined) return yield* create
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
      const created = yield* answer(exit.value)
      yield* store.complete(org, address, key, created.status, JSON.stringify(created.body))
      return exit.value
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
