/**
 * The REST operation an MCP tool mirrors, read from the HttpApi contract itself: its name
 * (`group.endpoint`, e.g. `knowledgebases.search`), its method, the scope(s) and gate its policy
 * annotations require (`server/http/policy.ts`), the JSON Schema of its inputs (path, query and
 * body, generated from their Effect Schemas), the JSON Schema of its success answer (encoded side,
 * as OpenAPI publishes it), its OpenAPI summary and the hints a client may show (read-only,
 * destructive, idempotent). A tool takes its rules from here instead of restating them.
 */
import { type HttpApiEndpoint, type HttpApiGroup, HttpApiSchema, type HttpMethod, OpenApi } from "@effect/platform"
import { Context, JSONSchema, Option, Schema } from "effect"
import type { ApiScope, Gate } from "../identity/domain.js"
import { AnsweredOnRequest } from "../http/contract.js"
import { admittingScopes, RequiredGate, RequiredScope } from "../http/policy.js"
import { camelName } from "./names.js"

/** An endpoint's declared successes but those answered only on request (`answeredOnRequest`: `detach`'s 202). */
const answeredNow = (success: Schema.Schema.Any): Schema.Schema.Any => {
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, success)
  const kept = [...members].filter((member) => member.ast.annotations[AnsweredOnRequest] !== true)
  return kept.length === members.size || kept.length === 0 ? success : kept.length === 1 ? kept[0]! : Schema.Union(...kept)
}

/** A JSON Schema as `JSONSchema.make` writes it. */
export type JsonSchema = Record<string, any>

/** What a client may assume of a tool (MCP `ToolAnnotations`' hints). */
export interface OperationHints {
  /** A GET: changes nothing. */
  readonly readOnlyHint: boolean
  /** A DELETE: removes something. */
  readonly destructiveHint: boolean
  /** GET, PUT, PATCH or DELETE: calling it again with the same arguments changes nothing more. */
  readonly idempotentHint: boolean
}

/** `conversation_id` → `conversationId`, as a type (MCP arguments are camelCase: `names.ts`). */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S

/** Every field of a union of structs (JSON-or-multipart bodies), each as any member types it. */
type Fields<U> = [U] extends [never]
  ? {}
  : { readonly [K in U extends unknown ? keyof U & string : never as Camel<K>]: U extends unknown ? (K extends keyof U ? U[K] : never) : never }

/** The decoded inputs of an endpoint by camelCase name: path, query and body. */
export type InputsOf<Endpoint extends HttpApiEndpoint.HttpApiEndpoint.Any> = Fields<HttpApiEndpoint.HttpApiEndpoint.PathParsed<Endpoint>> &
  Fields<HttpApiEndpoint.HttpApiEndpoint.UrlParams<Endpoint>> &
  Fields<HttpApiEndpoint.HttpApiEndpoint.Payload<Endpoint>>

/** One operation of the contract, as the MCP door needs it (`Inputs`: its decoded inputs, for typed arguments). */
export interface Operation<Inputs = {}> {
  /** Types only: the operation's inputs by name. */
  readonly inputTypes?: Inputs
  /** `group.endpoint`, e.g. `knowledgebases.search`. */
  readonly name: string
  readonly method: HttpMethod.HttpMethod
  /** Any one of these admits a key (empty: none required). */
  readonly scopes: ReadonlyArray<ApiScope>
  /** The organization gate the operation needs. */
  readonly gate: Gate | undefined
  /** Whether it takes an `Idempotency-Key` header (a keyed create). */
  readonly takesIdempotencyKey: boolean
  /** Its inputs by name (path, query, then body fields, camelCase): each one's JSON Schema. */
  readonly inputs: ReadonlyMap<string, JsonSchema>
  /**
   * The JSON Schema of its success answer, standing alone (`standaloneSchema`); built on first use.
   * A success answered only on request (`answeredOnRequest`: a run's 202 to `detach`) is left out: no tool asks for one.
   */
  readonly output: JsonSchema
  /** Its OpenAPI summary (`List Knowledgebases`), or its name when it has none. */
  readonly summary: string
  readonly hints: OperationHints
}

/** Follows `$ref`s into `$defs`; keywords beside a `$ref` (a refinement's bounds) win over the definition's. */
const resolve = (schema: JsonSchema, defs: JsonSchema): JsonSchema => {
  let current = schema
  while (typeof current["$ref"] === "string") {
    const { $ref, ...beside } = current
    current = { ...(defs[String($ref).replace("#/$defs/", "")] ?? {}), ...beside }
  }
  return current
}

/**
 * A schema with every `$ref` replaced by what it names, so each input stands alone. Recursive
 * schemas do not occur among operation inputs; a cycle would be cut at the repeated definition.
 */
export const inlineRefs = (schema: unknown, defs: JsonSchema, seen: ReadonlySet<string> = new Set()): any => {
  if (Array.isArray(schema)) return schema.map((item) => inlineRefs(item, defs, seen))
  if (schema === null || typeof schema !== "object") return schema
  const object = schema as JsonSchema
  if (typeof object["$ref"] === "string") {
    const { $ref, ...beside } = object
    const name = String($ref).replace("#/$defs/", "")
    const named = seen.has(name) ? {} : inlineRefs(defs[name] ?? {}, defs, new Set([...seen, name]))
    return { ...named, ...inlineRefs(beside, defs, seen) }
  }
  return Object.fromEntries(Object.entries(object).filter(([key]) => key !== "$defs" && key !== "$schema").map(([key, value]) => [key, inlineRefs(value, defs, seen)]))
}

/** Drops every `$id` (Effect names each `Schema.Unknown` `/schemas/unknown`: inlined, the ids would repeat). */
const withoutIds = (schema: unknown): any => {
  if (Array.isArray(schema)) return schema.map(withoutIds)
  if (schema === null || typeof schema !== "object") return schema
  return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== "$id").map(([key, value]) => [key, withoutIds(value)]))
}

/**
 * The JSON Schema of `schema`'s encoded side (what is sent as JSON), generated by Effect as OpenAPI's
 * is, with every `$ref` inlined and no `$id`, `$defs` or `$schema`: one document that stands alone.
 */
export const standaloneSchema = (schema: Schema.Schema.All): JsonSchema => {
  const document = JSONSchema.make(schema as Schema.Schema<any, any, never>) as JsonSchema
  return withoutIds(inlineRefs(document, (document["$defs"] ?? {}) as JsonSchema))
}

/** The named fields of one input schema (a struct, or a union of structs such as JSON-or-multipart), camelCase. */
export const fieldsOf = (schema: Schema.Schema.All | undefined): Array<[string, JsonSchema]> => {
  if (schema === undefined) return []
  let document: JsonSchema
  try {
    document = JSONSchema.make(schema as Schema.Schema<any, any, never>) as JsonSchema
  } catch {
    return []
  }
  const defs = (document["$defs"] ?? {}) as JsonSchema
  const root = resolve(document, defs)
  const members: Array<JsonSchema> = Array.isArray(root["anyOf"]) ? root["anyOf"].map((member: JsonSchema) => resolve(member, defs)) : [root]
  const fields: Array<[string, JsonSchema]> = []
  for (const member of members) {
    for (const [name, field] of Object.entries((member["properties"] ?? {}) as JsonSchema)) fields.push([camelName(name), inlineRefs(field, defs)])
  }
  return fields
}

/** The hints of an HTTP method (conventions: PUT, PATCH and DELETE are idempotent; a POST is not). */
export const hintsOf = (method: HttpMethod.HttpMethod): OperationHints => ({
  readOnlyHint: method === "GET",
  destructiveHint: method === "DELETE",
  idempotentHint: method === "GET" || method === "PUT" || method === "PATCH" || method === "DELETE"
})

const getOr = <I, S>(context: Context.Context<never>, tag: Context.Tag<I, S>): S | undefined =>
  Option.getOrUndefined(Context.getOption(context as Context.Context<I>, tag))

/**
 * The operation `name` of `group`: its policy as the policy index reads it (the endpoint's
 * annotations over its group's), its inputs and hints.
 */
export const operation = <
  Group extends HttpApiGroup.HttpApiGroup.Any,
  const Name extends Group extends HttpApiGroup.HttpApiGroup<any, infer Endpoints, any, any, any> ? HttpApiEndpoint.HttpApiEndpoint.Name<Endpoints> : never
>(
  group: Group,
  name: Name
): Operation<
  InputsOf<
    HttpApiEndpoint.HttpApiEndpoint.WithName<Group extends HttpApiGroup.HttpApiGroup<any, infer Endpoints, any, any, any> ? Endpoints : never, Name>
  >
> => {
  const { identifier, endpoints, annotations } = group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps
  const endpoint = endpoints[name as string]
  if (endpoint === undefined) throw new Error(`The contract has no operation ${identifier}.${String(name)}.`)
  const merged = Context.merge(annotations, endpoint.annotations)
  const required = getOr(merged, RequiredScope)
  const inputs = new Map<string, JsonSchema>()
  let output: JsonSchema | undefined
  for (const source of [endpoint.pathSchema, endpoint.urlParamsSchema, endpoint.payloadSchema]) {
    for (const [field, schema] of fieldsOf(Option.getOrUndefined(source))) if (!inputs.has(field)) inputs.set(field, schema)
  }
  return {
    name: `${identifier}.${endpoint.name}`,
    method: endpoint.method,
    scopes: required === undefined ? [] : admittingScopes(required),
    gate: getOr(merged, RequiredGate),
    takesIdempotencyKey: fieldsOf(Option.getOrUndefined(endpoint.headersSchema)).some(([field]) => field.toLowerCase() === "idempotency-key"),
    inputs,
    get output() {
      return (output ??= standaloneSchema(answeredNow(endpoint.successSchema)))
    },
    summary: getOr(merged, OpenApi.Summary) ?? `${identifier}.${endpoint.name}`,
    hints: hintsOf(endpoint.method)
  }
}
