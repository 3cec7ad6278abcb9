/**
 * Bearer-key authentication for every endpoint: the one admission (`identity/admission.ts`) with
 * the rule the matched endpoint declares (its scope, its group's gate, the External API's plans).
 */
import {
  type HttpApi,
  HttpApiMiddleware,
  HttpApiSecurity,
  HttpRouter,
  HttpServerRequest
} from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import type { Principal } from "../identity/domain.js"
import { AccountsService } from "../identity/service.js"
import { type AdmissionRule, bearerToken, makeAdmission, refusalOf, restRule } from "../identity/admission.js"
import { ErrorResponse } from "./error-responses.js"
import { admittingScopes, type EndpointPolicy, policyIndex, type PolicyIndex, type RequiredScopes } from "./policy.js"

export { bearerToken, gateError, scopeRefusal } from "../identity/admission.js"

/** The caller of the current request. */
export class CurrentPrincipal extends Context.Tag("svc/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** The authentication middleware every group uses. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("svc/Authentication", {
  provides: CurrentPrincipal,
  failure: Schema.Union(
    ErrorResponse.Unauthorized,
    ErrorResponse.InvalidApiKey,
    ErrorResponse.ApiKeyRevoked,
    ErrorResponse.InsufficientScope,
    ErrorResponse.ApiDisabled,
    ErrorResponse.GroupsDisabled,
    ErrorResponse.RateLimited
  ),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** Why `principal` may not call an endpoint with `policy`, if it may not: plan, then gate, then scope. */
export const authorize = (principal: Principal, policy: EndpointPolicy & { readonly scope: RequiredScopes }) =>
  refusalOf(principal, restRule(admittingScopes(policy.scope), policy.gate))

/** The admission rule of each route (`METHOD /path`), from its declared policy. */
export const admissionRules = (policies: PolicyIndex): ReadonlyMap<string, AdmissionRule> =>
  new Map([...policies].flatMap(([route, policy]) => (policy.scope === undefined ? [] : [[route, restRule(admittingScopes(policy.scope), policy.gate)] as const])))

/** The live authentication middleware for `api`: the one admission (`identity/admission.ts`) of the matched route's rule. */
export const AuthenticationLive = (api: HttpApi.HttpApi.Any) =>
  Layer.effect(
    Authentication,
    Effect.gen(function* () {
      const accounts = yield* AccountsService
      const admission = yield* makeAdmission
      const rules = admissionRules(policyIndex(api))
      return {
        bearer: () =>
          Effect.withFiberRuntime((fiber) => {
            const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
            const { route } = Context.unsafeGet(fiber.currentContext, HttpRouter.RouteContext)
            const rule = rules.get(`${route.method} ${route.path}`)
            if (rule === undefined) return Effect.dieMessage(`no scope declared for ${route.method} ${route.path}`)
            return admission.token(accounts, bearerToken(request.headers["authorization"]), rule)
          })
      }
    })
  )
