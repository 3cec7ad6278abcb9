/** Shared response building for handlers: encoded JSON, projected lists and idempotent creates. */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { CurrentPrincipal } from "./authentication.js"
import type { Conflict } from "../errors.js"
import { sha256Hex } from "../ids.js"
import { IdempotencyStore, type StoredAnswer } from "../idempotency.js"
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

/** A create in steps: work kept out of any transaction, then the database work, then what follows a commit. */
export interface CreateSteps<P, E1, R1, E2, R2, R3> {
  /** Network, DNS, file or model work, and checks that need it; runs before any transaction. */
  readonly prepare: Effect.Effect<P, E1, R1>
  /** The database work only: with a key it commits in one transaction with its stored answer. */
  readonly write: (prepared: P) => Effect.Effect<Created, E2, R2>
  /** Runs once the create committed (never for a replay), e.g. to wake a worker. */
  readonly committed?: Effect.Effect<void, never, R3> | undefined
}

/** The answer to store for an expected client error; server faults are never stored. */
const refusalAnswer = (error: unknown) => {
  if (!isApiFailure(error)) return undefined
  const status = statusOfTag.get(error._tag) ?? 500
  return status < 500 ? { status, body: JSON.stringify(envelopeBody(error)) } : undefined
}

/**
 * Runs a create under the request's `Idempotency-Key`, if any, exactly once. The request is
 * fingerprinted by its JSON body as sent (keys sorted, so formatting does not matter). The create's
 * database work commits in one transaction with its stored answer; the first response (success or
 * expected failure) is replayed with `Idempotent-Replayed: true`; server faults store nothing, so
 * the retry runs again. `create` is either database work only, or steps that keep work which must
 * not run inside a transaction (network, files) before it.
 */
export const idempotentCreate = <E2, R2, P = void, E1 = never, R1 = never, R3 = never>(
  input: {
    readonly key: string | undefined
    readonly request: HttpServerRequest.HttpServerRequest
    /** The decoded body, fingerprinted when the raw body is not JSON (multipart uploads). */
    readonly payload: unknown
  },
  create: Effect.Effect<Created, E2, R2> | CreateSteps<P, E1, R1, E2, R2, R3>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E1 | E2 | Conflict,
  R1 | R2 | R3 | CurrentPrincipal | IdempotencyStore
> =>
  Effect.gen(function* () {
    const steps: CreateSteps<unknown, E1, R1, E2, R2, R3> = Effect.isEffect(create)
      ? { prepare: Effect.void as Effect.Effect<unknown, E1, R1>, write: () => create }
      : (create as CreateSteps<unknown, E1, R1, E2, R2, R3>)
    const committed = steps.committed ?? Effect.void
    if (input.key === undefined) {
      const created = yield* Effect.flatMap(steps.prepare, steps.write)
      yield* committed
      return jsonResponse(created.status, created.body)
    }
    const principal = yield* CurrentPrincipal
    const store = yield* IdempotencyStore
    const sent = (input.request.headers["content-type"] ?? "").includes("json")
      ? yield* Effect.orElseSucceed(input.request.json, () => input.payload)
      : input.payload
    const keyed = {
      organizationId: principal.organization.id,
      address: `${input.request.method} ${input.request.url.split("?")[0]}`,
      key: input.key,
      requestHash: sha256Hex(canonicalJson(sent))
    }
    const earlier = yield* store.lookup(keyed)
    if (earlier) return replayed(earlier)
    const prepared = yield* Effect.either(steps.prepare)
    const write =
      prepared._tag === "Right"
        ? Effect.map(steps.write(prepared.right), (created) => ({ status: created.status, body: JSON.stringify(created.body) }))
        : Effect.fail(prepared.left)
    const outcome = yield* store.once<E1 | E2, R2>(keyed, write, refusalAnswer)
    switch (outcome._tag) {
      case "Replay":
        return replayed(outcome.answer)
      case "Refused":
        return yield* Effect.fail(outcome.error)
      case "Created":
        yield* committed
        return jsonTextResponse(outcome.answer.status, outcome.answer.body)
    }
  })

/** A stored answer sent again. */
const replayed = (answer: StoredAnswer) =>
  jsonTextResponse(answer.status, answer.body, { "idempotent-replayed": "true" })
