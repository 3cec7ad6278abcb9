/**
 * What each endpoint requires, declared once on the endpoint (scope) or its group (gate), and
 * looked up by the matched route on every request.
 */
import { HttpApi, type HttpApiGroup, OpenApi } from "@effect/platform"
import { Context } from "effect"
import type { ApiScope, Gate } from "../identity/domain.js"

/** The scope an endpoint requires, or the scopes any one of which admits (`anyScope`). */
export type RequiredScopes = ApiScope | ReadonlyArray<ApiScope>

/** The scope an endpoint requires. */
export class RequiredScope extends Context.Tag("svc/RequiredScope")<RequiredScope, RequiredScopes>() {}

/** The organization gate a group of endpoints requires (`apps`, `groups`). */
export class RequiredGate extends Context.Tag("svc/RequiredGate")<RequiredGate, Gate>() {}

/** An endpoint's requirements. */
export interface EndpointPolicy {
  readonly scope: RequiredScopes | undefined
  readonly gate: Gate | undefined
}

/** `METHOD /path` (the router's path pattern) to the endpoint's requirements. */
export type PolicyIndex = ReadonlyMap<string, EndpointPolicy>

/** Reads every endpoint's requirements from the API definition. */
export const policyIndex = (api: HttpApi.HttpApi.Any): PolicyIndex => {
  const index = new Map<string, EndpointPolicy>()
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      index.set(`${endpoint.method} ${endpoint.path}`, {
        scope: Context.getOption(mergedAnnotations, RequiredScope).pipe((o) => (o._tag === "Some" ? o.value : undefined)),
        gate: Context.getOption(mergedAnnotations, RequiredGate).pipe((o) => (o._tag === "Some" ? o.value : undefined))
      })
    }
  })
  return index
}

/** Annotates an endpoint with its scope, for enforcement and for the OpenAPI description. */
export const scope =
  (required: ApiScope) =>
  <E extends { annotate: (tag: any, value: any) => E }>(endpoint: E): E =>
    endpoint.annotate(RequiredScope, required).annotate(OpenApi.Override, {
      "x-required-scope": required,
      security: [{ bearer: [required] }]
    })

/**
 * Annotates an endpoint admitting a key with any one of `required` (e.g. every `:execute` scope):
 * `x-required-scope` lists them and the security requirements are alternatives.
 */
export const anyScope =
  (...required: readonly [ApiScope, ApiScope, ...Array<ApiScope>]) =>
  <E extends { annotate: (tag: any, value: any) => E }>(endpoint: E): E =>
    endpoint.annotate(RequiredScope, required).annotate(OpenApi.Override, {
      "x-required-scope": required,
      security: required.map((one) => ({ bearer: [one] }))
    })

/** The scopes that admit a key to an endpoint. */
export const admittingScopes = (required: RequiredScopes): ReadonlyArray<ApiScope> => (typeof required === "string" ? [required] : required)

/** Annotates a group with the gate its endpoints need. */
export const gate =
  (required: Gate) =>
  <G extends HttpApiGroup.HttpApiGroup.Any>(group: G): G =>
    (group as any).annotate(RequiredGate, required) as G
