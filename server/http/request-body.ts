/**
 * Reading a request's body over HTTP: its JSON, or the refusal for a body the platform could not
 * read (over the limit: `PayloadTooLarge`; not JSON: `InvalidRequest`), never a defect. Decoding
 * what was read is `platform/request/decode.ts`.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { InvalidRequest, PayloadTooLarge } from "../platform/errors.js"
import { maxRequestBodyBytes } from "./limits.js"

/** The refusal for a body the platform could not read: over the limit, or not JSON. */
export const unreadableBody = (cause: unknown): InvalidRequest | PayloadTooLarge =>
  cause instanceof Error && cause.message === "maxBytes exceeded"
    ? new PayloadTooLarge({ message: `The request body is over the ${maxRequestBodyBytes / 1_000_000} MB limit.` })
    : new InvalidRequest({ message: "The request body is not valid JSON." })

/** The request's JSON body (`null` when empty). */
export const readJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.mapError(request.json, (error) => unreadableBody(error.cause))
