/**
 * What each operation of an `HttpApi` accepts besides its path: the media types of its body and
 * the names of its query parameters, read from the definition itself. A request to a known
 * operation with another body type (a form, text, XML, multipart where only JSON is taken, a
 * `Content-Type` that does not parse) or an unknown query parameter is refused with 400
 * `invalid_request` naming what is accepted, before any body is decoded: the platform's decoders
 * never see it (its multipart decoder turns a bad boundary into a defect).
 */
import { Headers, HttpApi, HttpMethod, type HttpServerRequest } from "@effect/platform"
import { Effect, Option, Schema, SchemaAST } from "effect"
import { InvalidRequest } from "../platform/errors.js"
import { isJsonMediaType, parseMediaType } from "./media-type.js"
import { decodedSegment } from "./request-url.js"

type AnySchema = Schema.Schema<unknown, unknown, never>

/** One operation's accepted request shape. */
interface OperationShape {
  readonly method: string
  /** The endpoint's path pattern, as the router and the policy index name it. */
  readonly path: string
  /** Path segments; null stands for a path parameter. */
  readonly segments: ReadonlyArray<string | null>
  /** The names of the path parameters, in order. */
  readonly parameterNames: ReadonlyArray<string>
  /** Accepted body media types (`application/json`, `multipart/form-data`); empty when it takes no body. */
  readonly bodyTypes: ReadonlyArray<string>
  /** Accepted query parameter names; null when any name is accepted. */
  readonly queryNames: ReadonlySet<string> | null
  /** The schemas the framework decodes the request with. */
  readonly schemas: {
    readonly path: Option.Option<AnySchema>
    readonly query: Option.Option<AnySchema>
    readonly headers: Option.Option<AnySchema>
    readonly payload: Option.Option<AnySchema>
  }
}

const splitPath = (path: string): Array<string> => path.split("/").filter((segment) => segment.length > 0)

const queryNamesOf = (schema: Option.Option<{ readonly ast: SchemaAST.AST }>): ReadonlySet<string> | null => {
  if (Option.isNone(schema)) return new Set()
  const encoded = SchemaAST.encodedAST(schema.value.ast)
  if (encoded._tag === "TypeLiteral" && encoded.indexSignatures.length > 0) return null
  return new Set(SchemaAST.getPropertySignatures(encoded).map((property) => String(property.name)))
}

/** The accepted shapes of every operation of an API. */
export type OperationShapes = ReadonlyArray<OperationShape>

/** Reads the accepted shape of every operation of `api`. */
export const operationShapes = (api: HttpApi.HttpApi.Any): OperationShapes => {
  const shapes: Array<OperationShape> = []
  HttpApi.reflect(api as HttpApi.HttpApi<string, any, any, any>, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, payloads }) => {
      const segments = splitPath(endpoint.path)
      shapes.push({
        method: endpoint.method,
        path: endpoint.path,
        segments: segments.map((segment) => (segment.startsWith(":") ? null : segment)),
        parameterNames: segments.filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1)),
        bodyTypes: HttpMethod.hasBody(endpoint.method) ? [...payloads.keys()] : [],
        queryNames: queryNamesOf(endpoint.urlParamsSchema),
        schemas: {
          path: endpoint.pathSchema as unknown as Option.Option<AnySchema>,
          query: endpoint.urlParamsSchema as unknown as Option.Option<AnySchema>,
          headers: endpoint.headersSchema as unknown as Option.Option<AnySchema>,
          payload: endpoint.payloadSchema as unknown as Option.Option<AnySchema>
        }
      })
    }
  })
  return shapes
}

/** The operations of each method and path length, so a request looks only at its candidates. */
const byMethodAndLength = new WeakMap<ReadonlyArray<OperationShape>, Map<string, Array<OperationShape>>>()

const candidatesOf = (shapes: ReadonlyArray<OperationShape>, method: string, length: number): ReadonlyArray<OperationShape> => {
  let index = byMethodAndLength.get(shapes)
  if (index === undefined) {
    index = new Map()
    for (const shape of shapes) {
      const key = `${shape.method} ${shape.segments.length}`
      const list = index.get(key)
      if (list === undefined) index.set(key, [shape])
      else list.push(shape)
    }
    byMethodAndLength.set(shapes, index)
  }
  return index.get(`${method} ${length}`) ?? []
}

/** The operation a request goes to, preferring a fixed segment over a parameter, as the router does. */
export const operationOf = (shapes: OperationShapes, method: string, segments: ReadonlyArray<string>) => {
  let best: OperationShape | undefined
  for (const shape of candidatesOf(shapes, method, segments.length)) {
    if (!shape.segments.every((segment, index) => segment === null || segment === segments[index])) continue
    if (best === undefined) {
      best = shape
      continue
    }
    const differs = shape.segments.findIndex((segment, index) => (segment === null) !== (best!.segments[index] === null))
    if (differs >= 0 && shape.segments[differs] !== null) best = shape
  }
  return best
}

/**
 * The methods of the operations whose path `segments` match, for an `Allow` header (with `HEAD`
 * where `GET` is, as the router answers it); empty when no operation has the path.
 */
export const allowedMethods = (shapes: OperationShapes, segments: ReadonlyArray<string>): ReadonlyArray<string> => {
  const methods = new Set<string>()
  for (const shape of shapes) {
    if (shape.segments.length === segments.length && shape.segments.every((segment, index) => segment === null || segment === segments[index])) {
      methods.add(shape.method)
    }
  }
  if (methods.has("GET")) methods.add("HEAD")
  return [...methods].sort()
}

const describeTypes = (types: ReadonlyArray<string>) => types.join(" or ")

/** What the shape checks read of a request: its method, target and headers (Effect's request or Node's). */
export interface RequestLine {
  readonly method: string
  readonly url: string
  readonly headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined }
}

const headerOf = (request: RequestLine, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

const hasBody = (request: RequestLine) =>
  request.headers["transfer-encoding"] !== undefined || Number(headerOf(request, "content-length") ?? 0) > 0

const bodyProblem = (shape: OperationShape, request: RequestLine): InvalidRequest | undefined => {
  if (shape.bodyTypes.length === 0) return undefined
  const accepted = () => describeTypes(shape.bodyTypes)
  const declared = headerOf(request, "content-type")
  if (declared === undefined) {
    // A body without Content-Type is read as JSON (where JSON is taken).
    return !hasBody(request) || shape.bodyTypes.includes("application/json")
      ? undefined
      : new InvalidRequest({ message: `Content-Type is missing; send the body as ${accepted()}.` })
  }
  const media = parseMediaType(declared)
  if (media === null) {
    return new InvalidRequest({ message: `Content-Type '${declared}' is not a valid media type; send the body as ${accepted()}.` })
  }
  const taken = isJsonMediaType(media) ? "application/json" : media.essence
  return shape.bodyTypes.includes(taken)
    ? undefined
    : new InvalidRequest({ message: `Content-Type ${media.essence} is not accepted here; send the body as ${accepted()}.` })
}

const queryProblem = (shape: OperationShape, url: string): InvalidRequest | undefined => {
  const accepted = shape.queryNames
  const query = url.indexOf("?")
  if (accepted === null || query < 0) return undefined
  const unknown = [...new Set(new URLSearchParams(url.slice(query + 1)).keys())].filter((name) => !accepted.has(name))
  if (unknown.length === 0) return undefined
  const names = unknown.map((name) => `'${name}'`).join(", ")
  const known = accepted.size === 0 ? "this operation takes none" : `it takes ${[...accepted].join(", ")}`
  return new InvalidRequest({
    message: `Unknown query parameter${unknown.length > 1 ? "s" : ""} ${names}; ${known}.`
  })
}

/** A NUL character (U+0000) in the path or query: no id or name holds one, and PostgreSQL text cannot. */
const nulInUrl = /%00/i

/**
 * Checks a request against the operation it goes to: the refusal when its body type or a query
 * parameter is not accepted there, or undefined (also for a path no operation has: routing answers).
 */
export const requestShapeProblem = (shapes: OperationShapes, request: RequestLine): InvalidRequest | undefined =>
  routedShapeProblem(operationOf(shapes, request.method, pathSegments(request.url)), request)

/** `requestShapeProblem` for a request already routed to `shape` (undefined: no operation has its path). */
export const routedShapeProblem = (shape: OperationShape | undefined, request: RequestLine): InvalidRequest | undefined => {
  if (nulInUrl.test(request.url)) return new InvalidRequest({ message: "The address may not contain the NUL character (%00)." })
  if (shape === undefined) return undefined
  return bodyProblem(shape, request) ?? queryProblem(shape, request.url)
}

/** The path segments of a request target (its query left out). */
export const pathSegments = (url: string) => {
  const query = url.indexOf("?")
  return splitPath(query < 0 ? url : url.slice(0, query))
}

const decodes = (schema: Option.Option<AnySchema>, input: () => unknown) =>
  Option.isNone(schema)
    ? Effect.succeed(true)
    : Effect.suspend(() => Schema.decodeUnknown(schema.value)(input())).pipe(
        Effect.match({ onFailure: () => false, onSuccess: () => true })
      )

/** The query of a request target as the router reads it: each name's value, or its values when repeated. */
export const queryRecord = (url: string): Record<string, string | Array<string>> => {
  const query = url.indexOf("?")
  const record: Record<string, string | Array<string>> = {}
  if (query < 0 || query === url.length - 1) return record
  for (const [name, value] of new URLSearchParams(url.slice(query + 1))) {
    const seen = record[name]
    record[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return record
}

/**
 * Whether the request itself decodes against its operation's schemas (path, query, headers and a
 * JSON body): when it does, a decode failure met while answering it came from our side (a row or
 * a response that does not fit its schema), not from the client. Only asked once something failed.
 */
export const requestDecodes = (shapes: ReadonlyArray<OperationShape>, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const segments = pathSegments(request.url)
    const shape = operationOf(shapes, request.method, segments)
    if (shape === undefined) return false
    const values = segments.filter((_, index) => shape.segments[index] === null).map((value) => decodedSegment(value))
    if (values.includes(null)) return false
    const path = Object.fromEntries(shape.parameterNames.map((name, index) => [name, values[index]]))
    const checks = [
      decodes(shape.schemas.path, () => path),
      decodes(shape.schemas.query, () => queryRecord(request.url)),
      decodes(shape.schemas.headers, () => request.headers)
    ]
    const media = parseMediaType(request.headers["content-type"] ?? "application/json")
    if (shape.bodyTypes.length > 0 && media !== null && isJsonMediaType(media)) {
      const body = yield* Effect.either(request.json)
      if (body._tag === "Left") return false
      checks.push(decodes(shape.schemas.payload, () => body.right))
    }
    return (yield* Effect.all(checks)).every(Boolean)
  })

/**
 * The request as the platform's body decoder should see it: a `+json` body (e.g.
 * `application/vnd.api+json`) is relabelled `application/json`, the only JSON type it recognises.
 */
export const withJsonRecognised = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  const declared = request.headers["content-type"]
  if (declared === undefined || !declared.includes("+json")) return request
  const media = parseMediaType(declared)
  return media === null || !isJsonMediaType(media) || media.essence === "application/json"
    ? request
    : request.modify({ headers: Headers.set(request.headers, "content-type", "application/json") })
}
