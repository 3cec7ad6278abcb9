/**
 * Request-level behavior shared by every route: a request id on every response, body size limits,
 * the body media types and query parameters each operation accepts (request-shape.ts), and every
 * failure (ours, the framework's, or a defect) turned into the `{error:{code,message}}` envelope:
 * the client's decode failures are 400, ours (a row or response that does not fit its schema) 500.
 * Defects are logged with the request id and never leak details.
 */
import { FileSystem, HttpApi, HttpApiBuilder, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Layer, Option, ParseResult } from "effect"
import { InvalidRequest, MethodNotAllowed, NotFound, PayloadTooLarge, ServerError } from "../platform/errors.js"
import { bodyWithinLimit, hasUnsizedBody } from "./body-limit.js"
import { isApiFailure } from "../platform/request/error-catalog.js"
import { errorResponse } from "./error-responses.js"
import { maxRequestBodyBytes } from "./limits.js"
import { type DecodeIssue, describeIssues } from "../platform/request/decode.js"
import { unreadableBody } from "./request-body.js"
import { requestIdOf } from "./request-intake.js"
import { allowedMethods, operationOf, type OperationShapes, operationShapes, pathSegments, requestDecodes, requestShapeProblem, withJsonRecognised } from "./request-shape.js"
import { nulTextRefusal } from "../platform/sql/text-refusal.js"
import { jsonNestsDeeperThan, tooDeeplyNested } from "../platform/request/json-nesting.js"


export { newRequestId } from "./request-intake.js"

/**
 * Maps any failure of a request to an expected failure, logging defects. A decode failure is the
 * client's 400 only when the request itself does not decode (`requestDecodes`); a row or a
 * response that does not fit its schema, like any other defect, is our 500.
 */
export const toApiFailure = (cause: Cause.Cause<unknown>, requestId: string, requestDecodes: Effect.Effect<boolean>) =>
  Effect.gen(function* () {
    if (!Cause.isInterruptedOnly(cause)) {
      const failed = Option.isSome(Cause.failureOption(cause))
      const error = Cause.squash(cause) as { _tag?: string; issues?: ReadonlyArray<DecodeIssue>; cause?: unknown }
      if (isApiFailure(error)) return error
      switch (error._tag) {
        case "HttpApiDecodeError":
          if (!(yield* requestDecodes)) {
            return new InvalidRequest({ message: describeIssues(error.issues ?? []) || "The request is invalid." })
          }
          break
        case "ParseError":
          if (failed && !(yield* requestDecodes)) {
            return new InvalidRequest({
              message: describeIssues(ParseResult.ArrayFormatter.formatErrorSync(error as ParseResult.ParseError))
            })
          }
          break
        case "RequestError":
          return unreadableBody(error.cause)
        case "RouteNotFound":
          return new NotFound({ message: "No such endpoint." })
        case "SqlError": {
          const refusal = nulTextRefusal(cause)
          if (refusal !== null) return refusal
          break
        }
      }
    }
    if (Cause.isInterruptedOnly(cause)) return new ServerError({ message: "The request was interrupted." })
    yield* Effect.logError("request failed", cause).pipe(Effect.annotateLogs("requestId", requestId))
    return new ServerError({ message: `Something went wrong on our side; it is safe to retry (request ${requestId}).` })
  })

/** The body size limit for every request (the platform's own default is 10 MB). */
export const BodySizeLimitLive = Layer.succeed(
  HttpIncomingMessage.MaxBodySize,
  Option.some(FileSystem.Size(maxRequestBodyBytes))
)

/**
 * The request with every `;` of its path sent as `%3B`. The router reads a `;` as the start of the
 * query (as `?`), where the fast lane and the operation shapes read it as part of a segment: kept
 * in its segment, `/agents/;x=1` is the Agent `;x=1` (404) whichever door serves it, instead of the
 * listing with a query parameter `x`.
 */
const withSemicolonsInSegments = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  const query = request.url.indexOf("?")
  const path = query < 0 ? request.url : request.url.slice(0, query)
  return path.includes(";") ? request.modify({ url: path.replaceAll(";", "%3B") + (query < 0 ? "" : request.url.slice(query)) }) : request
}

/** Whether a JSON body nests deeper than the limit (read once here; the router reads the same cached text). */
const nestsTooDeeply = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<boolean> =>
  (request.headers["content-type"] ?? "").includes("json") &&
  (request.headers["content-length"] !== undefined ? request.headers["content-length"] !== "0" : hasUnsizedBody(request))
    ? Effect.orElseSucceed(Effect.map(request.text, (text) => jsonNestsDeeperThan(text)), () => false)
    : Effect.succeed(false)

/**
 * 405 with `Allow` for a method no operation of a known path has (`PUT /agents`), as RFC 9110 asks;
 * null when the method has an operation there or no operation has the path (the router's 404).
 */
const methodRefusal = (shapes: OperationShapes, request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse | null => {
  const method = request.method === "HEAD" ? "GET" : request.method
  const segments = pathSegments(request.url)
  if (operationOf(shapes, method, segments) !== undefined) return null
  const allowed = allowedMethods(shapes, segments)
  if (allowed.length === 0) return null
  return HttpServerResponse.setHeader(
    errorResponse(new MethodNotAllowed({ message: `${request.method} is not an operation of this path; it takes ${allowed.join(", ")}.` })),
    "allow",
    allowed.join(", ")
  )
}

/** The API-level middleware: limits, the request's shape, the error envelope and request id. */
export const RequestMiddlewareLive = HttpApiBuilder.middleware(
  Effect.gen(function* () {
    const shapes = operationShapes((yield* HttpApi.Api).api)
    return (app) =>
      Effect.gen(function* () {
        const incoming = yield* HttpServerRequest.HttpServerRequest
        const requestId = requestIdOf(incoming.source)
        const request = withSemicolonsInSegments(withJsonRecognised(incoming))
        const fits = yield* bodyWithinLimit(request)
        const refusal = fits ? (requestShapeProblem(shapes, request) ?? ((yield* nestsTooDeeply(request)) ? tooDeeplyNested() : undefined)) : undefined
        const wrongMethod = fits ? methodRefusal(shapes, request) : null
        const response = wrongMethod !== null
          ? wrongMethod
          : !fits
          ? HttpServerResponse.setHeader(
              errorResponse(
                new PayloadTooLarge({ message: `The request body is over the ${maxRequestBodyBytes / 1_000_000} MB limit.` })
              ),
              "connection",
              "close"
            )
          : refusal !== undefined
            ? errorResponse(refusal)
            : yield* app.pipe(
                Effect.provideService(HttpServerRequest.HttpServerRequest, request),
                Effect.catchAllCause((cause) =>
                  Effect.map(toApiFailure(cause, requestId, requestDecodes(shapes, request)), errorResponse)
                )
              )
        return HttpServerResponse.setHeader(response, "x-request-id", requestId)
      })
  })
)
