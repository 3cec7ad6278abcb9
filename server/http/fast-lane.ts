/**
 * The fast lane: a front branch (`front-branch.ts`) that serves the API's operations straight from
 * Node's request, without Effect's HTTP server, router, middleware stack and response conversion
 * around them, which cost several times what most operations cost themselves.
 *
 * It serves every operation alike: what it runs is the handler the operation's group was built
 * with (`served-groups.ts`, the one the router runs), after the one admission
 * (`identity/admission.ts`) with the rule the router's authentication applies, and with the
 * request decoded by the endpoint's own schemas. It answers with the endpoint's declared success
 * encoding, or the handler's own response (an idempotent replay, a stream), with any
 * pre-response handler the handler added; a failure or defect goes through the API's error
 * mapping (`toApiFailure`) into the envelope. Every answer carries the `X-Request-Id` the intake
 * gave the request (`request-intake.ts`, which also brought the data version up to date).
 *
 * What it leaves to the router:
 * - by the request's shape, before reading it: a target that is not a plain operation path
 *   (escapes, dot segments, trailing or double slashes), no operation, a query or header the
 *   operation refuses as it stands (`routedShapeProblem`), a body it cannot read whole as JSON
 *   (no `Content-Length`, chunked, over the limit, a media type other than `application/json`, a
 *   body where the operation takes none); and operations whose handler reads the raw request or
 *   that run middleware other than the authentication;
 * - a request whose path, query, headers or body do not decode: handed on with its body
 *   replayed, before anything was admitted, counted or written, for the router's own 400.
 */
import { HttpApp, type HttpApiEndpoint, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Either, Exit, FiberRef, Layer, Option, Runtime, Schema, type SchemaAST, Scope } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import { makeAdmission, type AdmissionRule } from "../identity/admission.js"
import { AccountsService } from "../identity/service.js"
import { Authentication, admissionRules, bearerToken, CurrentPrincipal } from "./authentication.js"
import { errorResponse } from "./error-responses.js"
import type { FrontBranches } from "./front-branch.js"
import { LaneRequest } from "./lane-request.js"
import { maxRequestBodyBytes } from "./limits.js"
import { isJsonMediaType, parseMediaType } from "./media-type.js"
import { sendResponse } from "./node-response.js"
import type { PolicyIndex } from "./policy.js"
import { carryRequestId, requestIdOf } from "./request-intake.js"
import { toApiFailure } from "./request-middleware.js"
import { type OperationShapes, operationOf, queryRecord, routedShapeProblem } from "./request-shape.js"
import { plainRequestPath } from "./request-url.js"
import { successMembers } from "./responses.js"
import { type ServedHandler, ServedHandlers } from "./served-groups.js"

type AnySchema = Schema.Schema<unknown, unknown, never>
type Decoder = (input: unknown) => Either.Either<unknown, unknown>
type QueryRecord = Readonly<Record<string, string | ReadonlyArray<string>>>

/** What the lane did with a request it took: answered it, or handed it on to the API (it did not decode). */
export type FastLaneOutcome = "served" | "handed-on"

/** How a server runs its fast lane. */
export interface FastLaneOptions {
  /** Off: every request goes through the API's router (comparisons, tests); on by default. */
  readonly enabled?: boolean | undefined
  /** Told of every request the lane took and what it did with it (tests). */
  readonly observe?: ((outcome: FastLaneOutcome, method: string, path: string) => void) | undefined
}

/** An answer the lane writes as text (a JSON or text success): status, media type and body. */
interface TextAnswer {
  readonly _tag: "TextAnswer"
  readonly status: number
  readonly contentType: string
  readonly text: string
}

/** What the lane sends: a success it encoded as text, or a response (the handler's own, an envelope, an empty success). */
type Answer = TextAnswer | HttpServerResponse.HttpServerResponse

const isTextAnswer = (answer: Answer): answer is TextAnswer => (answer as TextAnswer)._tag === "TextAnswer"

const asResponse = (answer: Answer): HttpServerResponse.HttpServerResponse =>
  isTextAnswer(answer) ? HttpServerResponse.text(answer.text, { status: answer.status, contentType: answer.contentType }) : answer

/** An operation ready to serve: its handler, admission rule, decoders and answer encoder. */
interface Lane {
  readonly served: ServedHandler
  readonly rule: AdmissionRule
  /** Whether the endpoint takes a (JSON) body. */
  readonly takesBody: boolean
  readonly hasHeaders: boolean
  readonly decodePath: Decoder
  readonly decodeQuery: Decoder
  readonly decodeHeaders: Decoder
  readonly decodePayload: Decoder
  /** The answer of a value, as the router encodes it; undefined when no declared success encodes it. */
  readonly encode: (value: unknown) => Answer | undefined
}

const decoderOf = (schema: Option.Option<unknown>): Decoder =>
  Option.isSome(schema) ? Schema.decodeUnknownEither(schema.value as AnySchema) : (input) => Either.right(input)

/** Whether `ast` takes a single string (else a lone query value is given to it as a one-item array, as the router does). */
const takesOneString = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "Literal":
    case "TemplateLiteral":
    case "Enums":
      return true
    case "Union":
      return ast.types.some(takesOneString)
    case "Suspend":
      return takesOneString(ast.f())
    case "Refinement":
    case "Transformation":
      return takesOneString(ast.from)
    default:
      return false
  }
}

/**
 * The query decoder of an endpoint: a value given once where the schema takes a list becomes a
 * one-item list first (the router's documented normalisation), then the schema decodes it.
 */
const queryDecoderOf = (schema: Option.Option<unknown>): Decoder => {
  if (Option.isNone(schema)) return (input) => Either.right(input)
  const ast = (schema.value as AnySchema).ast
  const lists = new Set(
    ast._tag === "TypeLiteral" ? ast.propertySignatures.filter((property) => !takesOneString(property.type)).map((property) => String(property.name)) : []
  )
  const decode = Schema.decodeUnknownEither(schema.value as AnySchema)
  if (lists.size === 0) return decode
  return (input) => {
    const record = { ...(input as QueryRecord) } as Record<string, string | ReadonlyArray<string>>
    for (const name of lists) {
      const value = record[name]
      if (typeof value === "string") record[name] = [value]
    }
    return decode(record)
  }
}

/** Encodes a handler's value as the router does: the first declared success that encodes it, with its status and encoding. */
const successEncoder = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps): Lane["encode"] => {
  const members = successMembers(endpoint.successSchema)
  return (value) => {
    for (const { status, encoding, encode, isVoid } of members) {
      const encoded = encode(value)
      if (Either.isLeft(encoded)) continue
      if (isVoid) return HttpServerResponse.empty({ status })
      switch (encoding.kind) {
        case "Json":
          return { _tag: "TextAnswer", status, contentType: encoding.contentType, text: JSON.stringify(encoded.right) }
        case "Text":
          return { _tag: "TextAnswer", status, contentType: encoding.contentType, text: String(encoded.right) }
        case "Uint8Array":
          return HttpServerResponse.uint8Array(encoded.right as Uint8Array, { status, contentType: encoding.contentType })
        default:
          return undefined
      }
    }
    return undefined
  }
}

const laneOf = (served: ServedHandler, rules: ReadonlyMap<string, AdmissionRule>): Lane | undefined => {
  const { endpoint } = served
  const rule = rules.get(`${endpoint.method} ${endpoint.path}`)
  if (rule === undefined || served.raw || served.middleware.length !== 1 || served.middleware[0] !== Authentication.key) return undefined
  return {
    served,
    rule,
    takesBody: Option.isSome(endpoint.payloadSchema),
    hasHeaders: Option.isSome(endpoint.headersSchema),
    decodePath: decoderOf(endpoint.pathSchema),
    decodeQuery: queryDecoderOf(endpoint.urlParamsSchema),
    decodeHeaders: decoderOf(endpoint.headersSchema),
    decodePayload: decoderOf(endpoint.payloadSchema),
    encode: successEncoder(endpoint)
  }
}

/** A readable request like `request`, whose body is `body` again (for the API, once the lane read it). */
const replayOf = (request: IncomingMessage, body: Buffer): IncomingMessage => {
  const replay = new Readable({
    read() {
      if (body.length > 0) this.push(body)
      this.push(null)
    }
  })
  return Object.assign(carryRequestId(request, replay), {
    headers: request.headers,
    rawHeaders: request.rawHeaders,
    trailers: {},
    rawTrailers: [],
    url: request.url,
    method: request.method,
    httpVersion: request.httpVersion,
    httpVersionMajor: request.httpVersionMajor,
    httpVersionMinor: request.httpVersionMinor,
    complete: true,
    socket: request.socket,
    connection: request.socket
  }) as unknown as IncomingMessage
}

const emptyBody = Buffer.alloc(0)

/** Sends an answer: a text one in one write of its head and body, a response as the platform's server would. */
const send = (answer: Answer, response: ServerResponse, requestId: string): Effect.Effect<void, unknown> => {
  if (!isTextAnswer(answer)) return sendResponse(answer, response, { "x-request-id": requestId })
  if (!response.writableEnded) {
    response
      .writeHead(answer.status, { "content-type": answer.contentType, "content-length": Buffer.byteLength(answer.text), "x-request-id": requestId })
      .end(answer.text)
  }
  return Effect.void
}

/** Reads the whole body (its `Content-Length` was checked against the limit before). */
const readBody = (request: IncomingMessage, onBody: (body: Buffer) => void, onError: () => void) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => void chunks.push(chunk))
  request.once("end", () => onBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
  request.once("error", onError)
}

/** A request the lane took, from its line and headers alone. */
interface Taken {
  readonly lane: Lane
  readonly segments: ReadonlyArray<string>
  readonly parameters: ReadonlyArray<readonly [index: number, name: string]>
  readonly target: string
}

/**
 * The lane, in front of the API on `front` for as long as the layer lives, serving the handlers
 * the API's groups noted in {@link ServedHandlers} (read at the first request, once every group
 * was built), for the operations `shapes` and `policies` describe.
 */
export const FastLaneLive = (options: {
  readonly front: FrontBranches
  readonly shapes: OperationShapes
  readonly policies: PolicyIndex
  readonly observe?: FastLaneOptions["observe"]
}): Layer.Layer<never, never, ServedHandlers | AccountsService | Effect.Effect.Context<typeof makeAdmission>> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<never>()
      const runFork = Runtime.runFork(runtime)
      const served = yield* ServedHandlers
      const accounts = yield* AccountsService
      const admission = yield* makeAdmission
      const rules = admissionRules(options.policies)
      const { shapes } = options

      // Built from the handlers noted so far, and again if more were noted since (a request that
      // came while the groups were still being built must not leave the lane short for good).
      let lanes: ReadonlyMap<string, Lane> = new Map()
      let lanesFrom = 0
      const laneFor = (key: string) => {
        if (lanesFrom !== served.length) {
          const built = new Map<string, Lane>()
          for (const handler of served) {
            const lane = laneOf(handler, rules)
            if (lane !== undefined) built.set(`${handler.endpoint.method} ${handler.endpoint.path}`, lane)
          }
          lanes = built
          lanesFrom = served.length
        }
        return lanes.get(key)
      }

      const take = (request: IncomingMessage): Taken | null => {
        const target = request.url
        const method = request.method
        if (target === undefined || method === undefined || method === "HEAD") return null
        const path = plainRequestPath(target)
        if (path === null || path.endsWith("/") || path.includes("//")) return null
        const segments = path.split("/").filter((segment) => segment.length > 0)
        const shape = operationOf(shapes, method, segments)
        if (shape === undefined) return null
        const lane = laneFor(`${shape.method} ${shape.path}`)
        if (lane === undefined) return null
        const headers = request.headers
        if (routedShapeProblem(shape, { method, url: target, headers }) !== undefined) return null
        if (headers["transfer-encoding"] !== undefined) return null
        const declared = headers["content-length"]
        if (lane.takesBody && shape.bodyTypes.length > 0) {
          if (declared === undefined || !(Number(declared) <= maxRequestBodyBytes)) return null
          const media = parseMediaType(headers["content-type"] ?? "")
          if (media === null || !isJsonMediaType(media) || media.essence !== "application/json") return null
        } else if (declared !== undefined && declared !== "0") return null
        const parameters: Array<readonly [number, string]> = []
        let parameter = 0
        shape.segments.forEach((segment, index) => {
          if (segment === null) parameters.push([index, shape.parameterNames[parameter++]!])
        })
        return { lane, segments, parameters, target }
      }

      /** Admits the caller, runs the handler and makes its answer (or the envelope of its failure). */
      const answer = (lane: Lane, request: LaneRequest, input: Record<string, unknown>, requestId: string, scope: Scope.Scope) => {
        const { served: handler } = lane
        // The handler sees its group's services and the request's own, as under the router, in one
        // context built once (each provide would copy the whole context again).
        const run = Effect.flatMap(admission.token(accounts, bearerToken(request.headers["authorization"]), lane.rule), (principal) =>
          Effect.mapInputContext(handler.handler(input) as Effect.Effect<unknown, unknown, never>, () =>
            Context.merge(
              handler.context,
              Context.make(CurrentPrincipal, principal).pipe(Context.add(HttpServerRequest.HttpServerRequest, request), Context.add(Scope.Scope, scope))
            )
          )
        )
        const handled = Effect.flatMap(run, (value): Effect.Effect<Answer> => {
          if (HttpServerResponse.isServerResponse(value)) return Effect.succeed(value)
          const encoded = lane.encode(value)
          return encoded === undefined ? Effect.dieMessage("An answer matches none of its endpoint's success schemas.") : Effect.succeed(encoded)
        }).pipe(
          Effect.catchAllCause((cause) => Effect.map(toApiFailure(cause, requestId, Effect.succeed(true)), (error): Answer => errorResponse(error))),
          Effect.flatMap((answered) =>
            Effect.flatMap(FiberRef.get(HttpApp.currentPreResponseHandlers), (preResponse) =>
              preResponse._tag === "None" ? Effect.succeed(answered) : Effect.orDie(preResponse.value(request, asResponse(answered)))
            )
          )
        )
        // The handler's requirements are its group's services (merged in above) and the request's.
        const whole = handled as Effect.Effect<Answer>
        return handler.uninterruptible ? Effect.uninterruptible(whole) : whole
      }

      /** Decodes and serves a request the lane took, once its body (if any) was read. */
      const serve = (incoming: IncomingMessage, response: ServerResponse, taken: Taken, body: Buffer) => {
        const { lane, segments, parameters, target } = taken
        const passOn = () => {
          options.observe?.("handed-on", incoming.method ?? "", lane.served.endpoint.path)
          options.front.pass(replayOf(incoming, body), response)
        }
        const params: Record<string, string> = {}
        for (const [index, name] of parameters) params[name] = segments[index]!
        const input: Record<string, unknown> = {}
        const request = new LaneRequest(incoming, body, target)
        try {
          const path = lane.decodePath(params)
          const query = lane.decodeQuery(queryRecord(target))
          if (Either.isLeft(path) || Either.isLeft(query)) return passOn()
          input["path"] = path.right
          input["urlParams"] = query.right
          if (lane.hasHeaders) {
            const headers = lane.decodeHeaders(incoming.headers)
            if (Either.isLeft(headers)) return passOn()
            input["headers"] = headers.right
          }
          if (lane.takesBody) {
            const payload = lane.decodePayload(body.length === 0 ? undefined : JSON.parse(body.toString("utf8")))
            if (Either.isLeft(payload)) return passOn()
            input["payload"] = payload.right
          }
        } catch {
          return passOn()
        }
        input["request"] = request
        const requestId = requestIdOf(incoming)
        const fiber = runFork(
          Effect.flatMap(Scope.make(), (scope) =>
            Effect.flatMap(answer(lane, request, input, requestId, scope), (answered) => send(answered, response, requestId)).pipe(
              Effect.onExit((exit) => Scope.close(scope, exit))
            )
          )
        )
        response.on("close", () => {
          if (!response.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
        })
        fiber.addObserver((exit) => {
          if (Exit.isFailure(exit) && !response.writableEnded) return void response.destroy()
          options.observe?.("served", incoming.method ?? "", lane.served.endpoint.path)
        })
      }

      const branch = (request: IncomingMessage, response: ServerResponse): boolean => {
        const taken = take(request)
        if (taken === null) return false
        if (!taken.lane.takesBody) serve(request, response, taken, emptyBody)
        else readBody(request, (body) => serve(request, response, taken, body), () => response.destroy())
        return true
      }

      const remove = options.front.add(branch)
      yield* Effect.addFinalizer(() => Effect.sync(remove))
    })
  )
