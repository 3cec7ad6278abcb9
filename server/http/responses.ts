/** Shared response building for handlers: idempotent creates and the answers they store. */
import { HttpApiSchema, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { CurrentPrincipal } from "./authentication.js"
import type { Conflict } from "../platform/errors.js"
import { sha256Hex } from "../platform/ids.js"
import { IdempotencyStore, type StoredAnswer } from "../platform/idempotency.js"
import { envelopeBody, isApiFailure, statusOfTag } from "../platform/request/error-catalog.js"

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

/** A create in steps: work kept out of any transaction, then the database work, then what follows a commit. */
export interface CreateSteps<P, E1, R1, A, E2, R2, R3> {
  /** Network, DNS, file or model work, and checks that need it; runs before any transaction. */
  readonly prepare: Effect.Effect<P, E1, R1>
  /** The database work only: with a key it commits in one transaction with its stored answer. */
  readonly write: (prepared: P) => Effect.Effect<A, E2, R2>
  /** Runs once the create committed (never for a replay), e.g. to wake a worker. */
  readonly committed?: Effect.Effect<void, never, R3> | undefined
}

/** The answer to store for an expected client error; server faults are never stored. */
const refusalAnswer = (error: unknown) => {
  if (!isApiFailure(error)) return undefined
  const status = statusOfTag.get(error._tag) ?? 500
  return status < 500 ? { status, body: JSON.stringify(envelopeBody(error)) } : undefined
}

/** One declared success of an endpoint: its status, its encoding and its encoder. */
export interface SuccessMember {
  readonly status: number
  readonly encoding: HttpApiSchema.Encoding
  /** Whether the success has no body. */
  readonly isVoid: boolean
  readonly encode: (value: unknown) => Either.Either<unknown, unknown>
}

/** The declared successes of an endpoint, in the order the router tries them when it encodes an answer. */
export const successMembers = (successSchema: Schema.Schema<any, unknown, any>): ReadonlyArray<SuccessMember> => {
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, successSchema)
  return Array.from(members, (member) => ({
    status: HttpApiSchema.getStatusSuccess(member),
    encoding: HttpApiSchema.getEncoding(member.ast),
    isVoid: HttpApiSchema.isVoid(member.ast),
    encode: Schema.encodeEither(member as Schema.Schema<unknown, unknown, never>)
  }))
}

/**
 * Encodes a value the way its endpoint answers it: with the first declared success schema that
 * encodes it, and that success's status. Idempotent creates store this answer for replays.
 */
export const declaredAnswer = (successSchema: Schema.Schema<any, unknown, any>) => {
  const encoders = successMembers(successSchema)
  return (value: unknown): Effect.Effect<Created> => {
    for (const { status, encode } of encoders) {
      const encoded = encode(value)
      if (Either.isRight(encoded)) return Effect.succeed({ status, body: encoded.right })
    }
    return Effect.dieMessage("A created value matches none of its endpoint's success schemas.")
  }
}

/**
 * Runs a create under the request's `Idempotency-Key`, if any, exactly once. The request is
 * fingerprinted by its JSON body as sent (keys sorted, so formatting does not matter). The create's
 * database work commits in one transaction with its stored answer (`answer`, see `declaredAnswer`);
 * the first response (success or expected failure) is replayed with `Idempotent-Replayed: true`;
 * server faults store nothing, so the retry runs again. `create` is either database work only, or
 * steps that keep work which must not run inside a transaction (network, files) before it. The
 * created value is returned as it is, for the endpoint's declared success schema to encode.
 */
export const idempotentCreate = <A, E2, R2, P = void, E1 = never, R1 = never, R3 = never>(
  input: {
    readonly key: string | undefined
    readonly request: HttpServerRequest.HttpServerRequest
    /** The decoded body, fingerprinted when the raw body is not JSON (multipart uploads). */
    readonly payload: unknown
  },
  create: Effect.Effect<A, E2, R2> | CreateSteps<P, E1, R1, A, E2, R2, R3>,
  answer: (created: A) => Effect.Effect<Created>
): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E1 | E2 | Conflict, R1 | R2 | R3 | CurrentPrincipal | IdempotencyStore> =>
  Effect.gen(function* () {
    const steps: CreateSteps<unknown, E1, R1, A, E2, R2, R3> = Effect.isEffect(create)
      ? { prepare: Effect.void as Effect.Effect<unknown, E1, R1>, write: () => create }
      : (create as CreateSteps<unknown, E1, R1, A, E2, R2, R3>)
    const committed = steps.committed ?? Effect.void
    if (input.key === undefined) {
      const created = yield* Effect.flatMap(steps.prepare, steps.write)
      yield* committed
      return created
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
    // Work outside the transaction runs only for a key that holds no answer yet; without any, the
    // transaction's own look-up is the only one.
    if (!Effect.isEffect(create)) {
      const earlier = yield* store.lookup(keyed)
      if (earlier) return replayed(earlier)
    }
    const prepared = yield* Effect.either(steps.prepare)
    let value: { readonly created: A } | undefined
    const write =
      prepared._tag === "Right"
        ? Effect.flatMap(steps.write(prepared.right), (created) => {
            value = { created }
            return Effect.map(answer(created), (stored) => ({ status: stored.status, body: JSON.stringify(stored.body) }))
          })
        : Effect.fail(prepared.left)
    const outcome = yield* store.once<E1 | E2, R2>(keyed, write, refusalAnswer)
    switch (outcome._tag) {
      case "Replay":
        return replayed(outcome.answer)
      case "Refused":
        return yield* Effect.fail(outcome.error)
      case "Created":
        yield* committed
        return value === undefined ? replayed(outcome.answer, false) : value.created
    }
  })

/** A stored answer sent (again). */
const replayed = (answer: StoredAnswer, replay = true) =>
  HttpServerResponse.text(answer.body, {
    status: answer.status,
    contentType: "application/json",
    headers: replay ? { "idempotent-replayed": "true" } : {}
  })
