/**
 * Where the catalog of expected failures (`platform/request/error-catalog.ts`) meets HTTP: each
 * error's documented `{error:{code,message}}` schema, carrying its status, for the HttpApi contract
 * and the OpenAPI description, and the HTTP response for a failure.
 */
import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Schema } from "effect"
import type * as Errors from "../platform/errors.js"
import {
  catalog,
  type CatalogEntry,
  codeOf,
  envelopeBody,
  errorHeaders,
  type FailureOf,
  statusOfTag,
  type Tag,
  tags
} from "../platform/request/error-catalog.js"

/** The `{error:{code,message}}` envelope schema of one error, decoding to and encoding from its class. */
type EnvelopeSchema<E extends Errors.ApiFailure> = Schema.Schema<
  E,
  { readonly error: { readonly code: E["code"]; readonly message: string } }
>

/** The documented error envelope schema of one error class, carrying its status for HttpApi. */
const envelopeOf = <E extends Errors.ApiFailure>({ error: errorClass, status, meaning }: CatalogEntry<E>): EnvelopeSchema<E> => {
  const code = codeOf(errorClass)
  const Envelope = Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String
    })
  }).annotations({
    identifier: `Error_${errorClass._tag}`,
    description: `\`${code}\`: ${meaning}`,
    examples: [{ error: { code, message: "A human-readable explanation." } }]
  })
  return Schema.transform(Envelope, Schema.instanceOf(errorClass), {
    strict: false,
    decode: (envelope) => new errorClass({ message: envelope.error.message, retryAfterSeconds: 60 }),
    encode: (error) => ({ error: { code, message: error.message } })
  }).annotations(HttpApiSchema.annotations({ status })) as unknown as EnvelopeSchema<E>
}

/** Response schemas, named after the error classes; endpoints declare the ones they can answer. */
export const ErrorResponse = Object.fromEntries(tags.map((tag) => [tag, envelopeOf(catalog[tag] as CatalogEntry<Errors.ApiFailure>)])) as {
  readonly [T in Tag]: EnvelopeSchema<FailureOf<T>>
}

/** The HTTP response for an expected failure, `Retry-After` included where it applies. */
export const errorResponse = (error: Errors.ApiFailure): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(envelopeBody(error), { status: statusOfTag.get(error._tag) ?? 500, headers: errorHeaders(error) })
