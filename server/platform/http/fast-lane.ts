/**
 * The fast lane: a front branch (`front-branch.ts`) that serves a few hot operations of the API
 * (listing and creating Knowledgebases, patching a page, provisioning an end user) straight from
 * Node's request, without the fiber, router, middleware stack and response conversion of Effect's
 * HTTP server around them, which cost several times the operation itself.
 *
 * It answers only what it answers exactly as the router would, and hands everything else on:
 * - A request it does not take (another path, a request the API would refuse for its shape: an
 *   unknown query parameter, another body type; a body without `Content-Length`, a body where the
 *   endpoint takes none, a header the endpoint reads such as `Idempotency-Key`) goes on to the API
 *   untouched.
 * - A request it took but cannot finish the plain way (a query or body that does not decode,
 *   a key that does not authenticate, is rate limited or may not call the endpoint, a payload the
 *   operation declines) is handed on before anything was written or counted, its body replayed,
 *   and the API answers it with its usual refusal.
 * - Otherwise the lane admits the caller as every door does (`platform/admission.ts`: authenticate,
 *   authorize, then count the rate; a refused request, handed on, is counted by no one), runs the same
 *   operation the endpoint's handler runs, and encodes the answer with the endpoint's declared
 *   success schema and encoding (JSON, or JSON text kept by `KeptJson`); a failure of the
 *   operation is answered with its envelope (`error-catalog.ts`), a defect as the API's 500.
 *   Every answer carries the `X-Request-Id` the request's intake gave it (`request-intake.ts`).
 */
import { type HttpApi, HttpApiBuilder, type HttpApiEndpoint, type HttpApiGroup } from "@effect/platform"
import { Effect, Either, Exit, Layer, Option, Runtime, Schema, SchemaAST } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import type { Principal } from "../../identity/domain.js"
import { AccountsService } from "../../identity/service.js"
import type { ApiFailure } from "../errors.js"
import { RateLimiter, RequestRate } from "../rate-limiter.js"
import { DatabaseBackend } from "../sql/dialect.js"
import { type AdmissionRule, makeAdmission } from "../admission.js"
import { admissionRules, bearerToken } from "./authentication.js"
import { envelopeBody, errorHeaders, statusOfTag } from "./error-catalog.js"
import type { FrontBranches } from "./front-branch.js"
import { maxRequestBodyBytes } from "./limits.js"
import { isJsonMediaType, parseMediaType } from "./media-type.js"
import type { PolicyIndex } from "./policy.js"
import { carryRequestId, requestIdOf } from "./request-intake.js"
import { toApiFailure } from "./request-middleware.js"
import { type OperationShapes, operationOf, queryRecord, routedShapeProblem } from "./request-shape.js"
import { plainRequestPath } from "./request-url.js"
import { successMembers } from "./responses.js"

type AnyEndpoint = HttpApiEndpoint.HttpApiEndpoint.AnyWithProps

/** What an operation of the lane receives: the caller and the decoded request. */
export interface FastInput<E extends HttpApiEndpoint.HttpApiEndpoint.Any> {
  readonly principal: Principal
  readonly path: HttpApiEndpoint.HttpApiEndpoint.PathParsed<E>
  readonly urlParams: HttpApiEndpoint.HttpApiEndpoint.UrlParams<E>
  readonly payload: HttpApiEndpoint.HttpApiEndpoint.Payload<E>
}

/** One endpoint the lane serves, and the operation its handler runs. */
export interface FastOperation {
  readonly endpoint: AnyEndpoint
  /** Whether the lane may serve a decoded payload (else the API answers it); all by default. */
  readonly accepts: (payload: unknown) => boolean
  readonly run: (input: FastInput<AnyEndpoint>) => Effect.Effect<unknown, ApiFailure>
}

/** Endpoint `name` of group `group` of a contract, with its precise type. */
export const endpointOf = <
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  G extends HttpApiGroup.HttpApiGroup.Name<Groups>,
  N extends HttpApiEndpoint.HttpApiEndpoint.Name<HttpApiGroup.HttpApiGroup.Endpoints<HttpApiGroup.HttpApiGroup.WithName<Groups, G>>>
>(
  contract: HttpApi.HttpApi<string, Groups, any, any>,
  group: G,
  name: N
): HttpApiEndpoint.HttpApiEndpoint.WithName<HttpApiGroup.HttpApiGroup.Endpoints<HttpApiGroup.HttpApiGroup.WithName<Groups, G>>, N> => {
  const endpoint = (contract.groups[group] as unknown as { endpoints: Record<string, unknown> } | undefined)?.endpoints[name]
  if (endpoint === undefined) throw new Error(`no endpoint ${group}.${name}`)
  return endpoint as never
}

/**
 * Declares that the lane serves `endpoint` by running `run`: the same operation (with the same
 * services) its handler runs when the request carries none of the headers the endpoint reads.
 */
export const fastOperation = <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(
  endpoint: E,
  run: (input: FastInput<E>) => Effect.Effect<HttpApiEndpoint.HttpApiEndpoint.Success<E>, ApiFailure>,
  options?: { readonly accepts?: (payload: HttpApiEndpoint.HttpApiEndpoint.Payload<E>) => boolean }
): FastOperation => {
  const props = endpoint as unknown as AnyEndpoint
  return {
    endpoint: props,
    accepts: (options?.accepts as ((payload: unknown) => boolean) | undefined) ?? (() => true),
    run: run as unknown as FastOperation["run"]
  }
}

/** An answer as sent: status, media type and body text. */
interface Encoded {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

/** An operation ready to serve: its decoders, policy and answer encoder. */
interface Lane {
  readonly operation: FastOperation
  readonly rule: AdmissionRule
  /** Whether the endpoint takes a (JSON) body. */
  readonly takesBody: boolean
  /** The path parameters' names, by their segment's position in the path. */
  readonly parameters: ReadonlyArray<readonly [index: number, name: string]>
  readonly decodePath: (input: unknown) => Either.Either<unknown, unknown>
  readonly decodeUrlParams: (input: unknown) => Either.Either<unknown, unknown>
  readonly decodePayload: (input: unknown) => Either.Either<unknown, unknown>
  /** Headers the endpoint reads: a request carrying one goes to the API. */
  readonly readHeaders: ReadonlyArray<string>
  /** The answer of a value, as the endpoint's router would send it; undefined when no success schema encodes it. */
  readonly encode: (value: unknown) => Encoded | undefined
}

type AnySchema = Schema.Schema<unknown, unknown, never>

type QueryRecord = Record<string, string | Array<string>>

/**
 * The router's own normalisation of query values before it decodes them (a single value wrapped
 * in an array where the schema takes an array): exported by the platform's module but not
 * declared, so the lane decodes exactly what the router decodes.
 */
const normalizeUrlParams = (HttpApiBuilder as unknown as { normalizeUrlParams?: (params: QueryRecord, ast: SchemaAST.AST) => QueryRecord })
  .normalizeUrlParams
if (normalizeUrlParams === undefined) throw new Error("@effect/platform no longer has HttpApiBuilder.normalizeUrlParams: the fast lane must be revised")

/**
 * Encodes a value as an endpoint answers it: with the first declared success schema that encodes
 * it, that success's status and its encoding (JSON text, or text as it is).
 */
const successEncoder = (endpoint: AnyEndpoint): Lane["encode"] => {
  const members = successMembers(endpoint.successSchema)
  for (const member of members) {
    if (member.isVoid || (member.encoding.kind !== "Json" && member.encoding.kind !== "Text")) {
      throw new Error(`the fast lane answers JSON and text only (${endpoint.name})`)
    }
  }
  return (value) => {
    for (const { status, encoding, encode } of members) {
      const encoded = encode(value)
      if (Either.isRight(encoded)) {
        return { status, contentType: encoding.contentType, body: encoding.kind === "Text" ? String(encoded.right) : JSON.stringify(encoded.right) }
      }
    }
    return undefined
  }
}

const decoderOf = (schema: Option.Option<unknown>) =>
  Option.isSome(schema) ? Schema.decodeUnknownEither(schema.value as AnySchema) : (input: unknown) => Either.right(input)

const headerNamesOf = (schema: Option.Option<unknown>): ReadonlyArray<string> =>
  Option.isNone(schema)
    ? []
    : SchemaAST.getPropertySignatures(SchemaAST.encodedAST((schema.value as AnySchema).ast)).map((property) => String(property.name).toLowerCase())

const laneOf = (operation: FastOperation, rules: ReadonlyMap<string, AdmissionRule>): Lane => {
  const { endpoint } = operation
  const rule = rules.get(`${endpoint.method} ${endpoint.path}`)
  if (rule === undefined) throw new Error(`no scope declared for ${endpoint.method} ${endpoint.path}`)
  const urlParams = endpoint.urlParamsSchema
  const decodeUrlParams = decoderOf(urlParams)
  return {
    operation,
    rule,
    takesBody: Option.isSome(endpoint.payloadSchema),
    parameters: endpoint.path
      .split("/")
      .filter((segment) => segment.length > 0)
      .flatMap((segment, index) => (segment.startsWith(":") ? [[index, segment.slice(1)] as const] : [])),
    decodePath: decoderOf(endpoint.pathSchema),
    decodeUrlParams: Option.isSome(urlParams)
      ? (record) => decodeUrlParams(normalizeUrlParams(record as QueryRecord, (urlParams.value as AnySchema).ast))
      : decodeUrlParams,
    decodePayload: decoderOf(endpoint.payloadSchema),
    readHeaders: headerNamesOf(endpoint.headersSchema),
    encode: successEncoder(endpoint)
  }
}

/** A request the lane took: what it decoded before anything ran. */
interface Taken {
  readonly lane: Lane
  readonly token: string
  readonly path: unknown
  readonly urlParams: unknown
  readonly payload: unknown
}

/** What the lane does with a request it took: answer it, or hand it on to the API. */
type Outcome =
  | { readonly _tag: "HandOn" }
  | { readonly _tag: "Answer"; readonly answer: Encoded; readonly headers: Readonly<Record<string, string>> }

const handOn: Outcome = { _tag: "HandOn" }

const failureAnswer = (error: ApiFailure): Outcome => ({
  _tag: "Answer",
  answer: { status: statusOfTag.get(error._tag) ?? 500, contentType: "application/json", body: JSON.stringify(envelopeBody(error)) },
  headers: errorHeaders(error)
})

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

/** Reads the whole body (its `Content-Length` was checked against the limit before). */
const readBody = (request: IncomingMessage, onBody: (body: Buffer) => void, onError: () => void) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => void chunks.push(chunk))
  request.once("end", () => onBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
  request.once("error", onError)
}

/** What the lane did with a request it took: answered it, or handed it on to the API. */
export type FastLaneOutcome = "served" | "handed-on"

/** How a server runs its fast lane. */
export interface FastLaneOptions {
  /** Off: every request goes through the API's router (comparisons, tests); on by default. */
  readonly enabled?: boolean | undefined
  /** Told of every request the lane took and what it did with it (tests). */
  readonly observe?: ((outcome: FastLaneOutcome, method: string, path: string) => void) | undefined
}

/** The services the lane's own steps use (the operations bring theirs). */
export type FastLaneServices = AccountsService | RateLimiter | DatabaseBackend

/**
 * The lane, put in front of the API on `front` for as long as the layer lives, serving
 * `operations` of the API whose operation shapes and policies are given.
 */
export const FastLaneLive = <R>(options: {
  readonly front: FrontBranches
  readonly shapes: OperationShapes
  readonly policies: PolicyIndex
  readonly operations: Effect.Effect<ReadonlyArray<FastOperation>, never, R>
  readonly observe?: FastLaneOptions["observe"]
}): Layer.Layer<never, never, R | FastLaneServices> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<FastLaneServices>()
      const accounts = yield* AccountsService
      const admission = yield* makeAdmission
      const rules = admissionRules(options.policies)
      const lanes = new Map<string, Lane>()
      for (const operation of yield* options.operations) {
        lanes.set(`${operation.endpoint.method} ${operation.endpoint.path}`, laneOf(operation, rules))
      }
      const runCallback = Runtime.runCallback(runtime)

      /** The one admission (`platform/admission.ts`); a refusal hands the request on, and the router refuses it the same way. */
      const admit = (taken: Taken) => admission.token(accounts, taken.token, taken.lane.rule)

      /** On PostgreSQL the data version is brought up to date first (`data-version-sync.ts`); nothing on SQLite. */
      const backend = yield* DatabaseBackend
      const synced = <A, E, R>(effect: Effect.Effect<A, E, R>) => (backend.dialect === "pg" ? Effect.zipRight(backend.syncDataVersion, effect) : effect)

      const serve = (taken: Taken, requestId: string): Effect.Effect<Outcome, never, FastLaneServices> =>
        synced(
          Effect.matchEffect(admit(taken), {
            onFailure: () => Effect.succeed(handOn),
            onSuccess: (principal) =>
              Effect.matchEffect(
                taken.lane.operation.run({ principal, path: taken.path as never, urlParams: taken.urlParams as never, payload: taken.payload as never }),
                {
                  onFailure: (error) => Effect.succeed(failureAnswer(error)),
                  onSuccess: (value) => {
                    const answer = taken.lane.encode(value)
                    return answer === undefined
                      ? Effect.dieMessage("An answer matches none of its endpoint's success schemas.")
                      : Effect.succeed<Outcome>({ _tag: "Answer", answer, headers: {} })
                  }
                }
              )
          })
        ).pipe(Effect.catchAllCause((cause) => Effect.map(toApiFailure(cause, requestId, Effect.succeed(true)), failureAnswer)))

      /** The lane, token and path of a request the lane takes, from its line and headers alone; null for the API. */
      const take = (request: IncomingMessage) => {
        const target = request.url
        const path = plainRequestPath(target)
        const method = request.method
        if (path === null || target === undefined || method === undefined || path.endsWith("/") || path.includes("//")) return null
        const segments = path.split("/").filter((segment) => segment.length > 0)
        const routed = operationOf(options.shapes, method, segments)
        if (routed === undefined) return null
        const lane = lanes.get(`${routed.method} ${routed.path}`)
        if (lane === undefined) return null
        const headers = request.headers
        if (routedShapeProblem(routed, { method, url: target, headers }) !== undefined) return null
        if (lane.readHeaders.some((name) => headers[name] !== undefined)) return null
        const declared = headers["content-length"]
        if (headers["transfer-encoding"] !== undefined) return null
        if (lane.takesBody) {
          if (declared === undefined || !(Number(declared) <= maxRequestBodyBytes)) return null
          const media = parseMediaType(headers["content-type"] ?? "")
          if (media === null || !isJsonMediaType(media) || media.essence !== "application/json") return null
        } else if (declared !== undefined && declared !== "0") return null
        const token = bearerToken(headers["authorization"])
        return token === null ? null : { lane, token, segments, target }
      }

      /** Decodes and serves a request the lane took, once its body (if any) was read. */
      const serveTaken = (request: IncomingMessage, response: ServerResponse, took: NonNullable<ReturnType<typeof take>>, body: Buffer) => {
        const { lane, token, segments, target } = took
        const passOn = () => {
          options.observe?.("handed-on", request.method ?? "", lane.operation.endpoint.path)
          options.front.pass(replayOf(request, body), response)
        }
        let parsed: unknown = undefined
        if (lane.takesBody) {
          try {
            parsed = JSON.parse(body.toString("utf8"))
          } catch {
            return passOn()
          }
        }
        const params: Record<string, string> = {}
        for (const [index, name] of lane.parameters) params[name] = segments[index]!
        let decoded: { path: unknown; urlParams: unknown; payload: unknown } | null = null
        try {
          const path = lane.decodePath(params)
          const urlParams = lane.decodeUrlParams(queryRecord(target))
          const payload = lane.decodePayload(parsed)
          if (Either.isRight(path) && Either.isRight(urlParams) && Either.isRight(payload) && lane.operation.accepts(payload.right)) {
            decoded = { path: path.right, urlParams: urlParams.right, payload: payload.right }
          }
        } catch {
          decoded = null
        }
        if (decoded === null) return passOn()
        const requestId = requestIdOf(request)
        runCallback(serve({ lane, token, ...decoded }, requestId), {
          onExit: (exit) => {
            if (Exit.isFailure(exit)) return void response.destroy()
            const outcome = exit.value
            if (outcome._tag === "HandOn") return passOn()
            options.observe?.("served", request.method ?? "", lane.operation.endpoint.path)
            const { status, contentType, body: text } = outcome.answer
            response
              .writeHead(status, { "content-type": contentType, "content-length": String(Buffer.byteLength(text)), "x-request-id": requestId, ...outcome.headers })
              .end(text)
          }
        })
      }

      const branch = (request: IncomingMessage, response: ServerResponse): boolean => {
        const took = take(request)
        if (took === null) return false
        if (!took.lane.takesBody) serveTaken(request, response, took, emptyBody)
        else readBody(request, (body) => serveTaken(request, response, took, body), () => response.destroy())
        return true
      }

      const remove = options.front.add(branch)
      yield* Effect.addFinalizer(() => Effect.sync(remove))
    })
  )
