/**
 * Decoding what a client sent into typed failures: a body that is not JSON, or that does not fit
 * its schema, is an `InvalidRequest` naming each field (a body over the limit `PayloadTooLarge`),
 * never a defect. Handlers that read their body themselves use these; the middleware uses the
 * same wording for the framework's own decode failures.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { InvalidRequest, PayloadTooLarge } from "../errors.js"
import { maxRequestBodyBytes } from "./limits.js"


/** One issue of a failed decode: where, and what is wrong. */
export interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** One message per field, naming it: the first issue found at each path. */
export const describeIssues = (issues: ReadonlyArray<DecodeIssue>): string => {
  const byPath = new Map<string, string>()
  for (const issue of issues) {
    const path = issue.path.map(String).join(".")
    if (!byPath.has(path)) byPath.set(path, issue.message)
  }
  return [...byPath].map(([path, message]) => (path ? `${path}: ${message}` : message)).join("; ")
}

/** The refusal for a body the platform could not read: over the limit, or not JSON. */
export const unreadableBody = (cause: unknown): InvalidRequest | PayloadTooLarge =>
  cause instanceof Error && cause.message === "maxBytes exceeded"
    ? new PayloadTooLarge({ message: `The request body is over the ${maxRequestBodyBytes / 1_000_000} MB limit.` })
    : new InvalidRequest({ message: "The request body is not valid JSON." })

/** The request's JSON body (`null` when empty). */
export const readJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.mapError(request.json, (error) => unreadableBody(error.cause))

/** Decodes a body already read into `schema`, failing with an `InvalidRequest` naming each field. */
export const decodeBody =
  <A, I>(schema: Schema.Schema<A, I, never>) =>
  (input: unknown): Effect.Effect<A, InvalidRequest> =>
    Effect.mapError(
      Schema.decodeUnknown(schema)(input),
      (error) =>
        new InvalidRequest({ message: describeIssues(ParseResult.ArrayFormatter.formatErrorSync(error)) || "The body is invalid." })
    )
