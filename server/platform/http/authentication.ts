/**
 * Bearer-key authentication for every endpoint: resolves the principal, counts the request against
 * the key's rate limit, then checks plan, gate and scope from the endpoint's declared policy.
 */
import {
  type HttpApi,
  HttpApiMiddleware,
  HttpApiSecurity,
  HttpRouter,
  HttpServerRequest
} from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { type ApiScope, apiPlans, type Gate, type Principal } from "../accounts/domain.js"
import { AccountsService } from "../accounts/service.js"
import { ApiDisabled, GroupsDisabled, InsufficientScope, Unauthorized } from "../errors.js"
import { RateLimiter, RequestRate } from "../rate-limiter.js"
import { ErrorResponse } from "./error-catalog.js"
import { admittingScopes, type EndpointPolicy, policyIndex, type RequiredScopes } from "./policy.js"

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

const bearerPattern = /^Bearer[ ]+([^\s]+)[ ]*$/i

/** The refusal of an organization gate that is off: `groups_disabled` for groups, else `api_disabled`. */
export const gateError = (gate: Gate) =>
  gate === "groups"
    ? new GroupsDisabled({ message: "User groups are not enabled for this organization." })
    : new ApiDisabled({ message: `The '${gate}' feature is not enabled for this organization.` })

/** Why `principal` may not use something `admitting` scopes admit (any one of them), if it may not. */
export const scopeRefusal = (principal: Principal, admitting: ReadonlyArray<ApiScope>): InsufficientScope | null => {
  if (admitting.some((one) => principal.scopes.has(one))) return null
  const roleNote =
    principal.key.kind === "personal" && principal.member ? ` for a member with role '${principal.member.role}'` : ""
  const named = admitting.length === 1 ? `the scope '${admitting[0]}'` : `one of the scopes ${admitting.map((one) => `'${one}'`).join(", ")}`
  return new InsufficientScope({ message: `This key lacks ${named}${roleNote}.` })
}

/** Why `principal` may not call an endpoint with `policy`, if it may not: plan, then gate, then scope. */
export const authorize = (principal: Principal, policy: EndpointPolicy & { scope: RequiredScopes }) => {
  const org = principal.organization
  if (!apiPlans.includes(org.plan)) {
    return new ApiDisabled({
      message: `The External API is on the Pro and Agency plans; this organization is on ${org.plan}.`
    })
  }
  if (policy.gate && !org.gates.has(policy.gate)) return gateError(policy.gate)
  return scopeRefusal(principal, admittingScopes(policy.scope))
}

/** The bearer token of an `Authorization` header, or null when the header is missing or malformed. */
export const bearerToken = (header: string | undefined): string | null => bearerPattern.exec(header ?? "")?.[1] ?? null

const unauthorized = new Unauthorized({ message: "Send the API key in the header 'Authorization: Bearer <API_KEY>'." })

/** The live authentication middleware for `api`. */
export const AuthenticationLive = (api: HttpApi.HttpApi.Any) =>
  Layer.effect(
    Authentication,
    Effect.gen(function* () {
      const accounts = yield* AccountsService
      const limiter = yield* RateLimiter
      const requestRate = yield* RequestRate
      const policies = policyIndex(api)
      return {
        bearer: () =>
          Effect.withFiberRuntime((fiber) => {
            const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
            const { route } = Context.unsafeGet(fiber.currentContext, HttpRouter.RouteContext)
            const policy = policies.get(`${route.method} ${route.path}`)
            if (!policy?.scope) return Effect.dieMessage(`no scope declared for ${route.method} ${route.path}`)
            const token = bearerToken(request.headers["authorization"])
            if (token === null) return Effect.fail(unauthorized)
            return Effect.flatMap(accounts.authenticate(token), (principal) =>
              Effect.flatMap(limiter.take(requestRate, principal.key.id), () => {
                const refusal = authorize(principal, policy as EndpointPolicy & { scope: RequiredScopes })
                return refusal ? Effect.fail(refusal) : Effect.succeed(principal)
              })
            )
          })
      }
    })
  )
