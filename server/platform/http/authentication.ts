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
import { apiPlans, type Gate, type Principal } from "../accounts/domain.js"
import { AccountsService } from "../accounts/service.js"
import { ApiDisabled, GroupsDisabled, InsufficientScope, Unauthorized } from "../errors.js"
import { RateLimiter, RequestRate } from "../rate-limiter.js"
import { ErrorResponse } from "./error-catalog.js"
import { policyIndex } from "./policy.js"

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

const gateError = (gate: Gate) =>
  gate === "groups"
    ? new GroupsDisabled({ message: "User groups are not enabled for this organization." })
    : new ApiDisabled({ message: `The '${gate}' feature is not enabled for this organization.` })

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
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const { route } = yield* HttpRouter.RouteContext
            const match = bearerPattern.exec(request.headers["authorization"] ?? "")
            if (!match) {
              return yield* new Unauthorized({
                message: "Send the API key in the header 'Authorization: Bearer <API_KEY>'."
              })
            }
            const principal = yield* accounts.authenticate(match[1]!)
            yield* limiter.take(requestRate, principal.key.id)
            const policy = policies.get(`${route.method} ${route.path}`)
            if (!policy?.scope) return yield* Effect.dieMessage(`no scope declared for ${route.method} ${route.path}`)
            const org = principal.organization
            if (!apiPlans.includes(org.plan)) {
              return yield* new ApiDisabled({
                message: `The External API is on the Pro and Agency plans; this organization is on ${org.plan}.`
              })
            }
            if (policy.gate && !org.gates.has(policy.gate)) return yield* gateError(policy.gate)
            if (!principal.scopes.has(policy.scope)) {
              const roleNote =
                principal.key.kind === "personal" && principal.member
                  ? ` for a member with role '${principal.member.role}'`
                  : ""
              return yield* new InsufficientScope({
                message: `This key lacks the scope '${policy.scope}'${roleNote}.`
              })
            }
            return principal
          })
      }
    })
  )
