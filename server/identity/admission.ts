/**
 * The one admission of a caller holding an API key (or a sign-in token), for every door that
 * serves one: the router, the fast lane, MCP over HTTP and stdio. In order: authenticate (401),
 * authorize: the plan the door is open on, the organization gate, the scopes (403), then count
 * the request against the key's rate (429), and only then the principal. A refused request is
 * never counted, whichever door it came through; an admitted one is counted once.
 */
import { Effect } from "effect"
import { ApiDisabled, type ApiKeyRevoked, GroupsDisabled, InsufficientScope, type InvalidApiKey, type RateLimited, Unauthorized } from "../platform/errors.js"
import { RateLimiter, RequestRate } from "../platform/rate-limiter.js"
import { type ApiScope, apiPlans, type Gate, type Plan, type Principal } from "./domain.js"
import { AccountsService } from "./service.js"

/** Why a caller is not admitted: 401, 403 or 429. */
export type AdmissionFailure = Unauthorized | InvalidApiKey | ApiKeyRevoked | ApiDisabled | GroupsDisabled | InsufficientScope | RateLimited

/** What admits a caller to one operation. */
export interface AdmissionRule {
  /** Any one of these admits (none: every key that passed the door). */
  readonly scopes: ReadonlyArray<ApiScope>
  /** The organization gate the operation needs (`apps`, `groups`, …). */
  readonly gate?: Gate | undefined
  /** The plans the door is open on, with the refusal's wording; absent when the door checked its plan already. */
  readonly plans?: { readonly allowed: ReadonlyArray<Plan>; readonly door: string } | undefined
}

const bearerPattern = /^Bearer[ ]+([^\s]+)[ ]*$/i

/** The bearer token of an `Authorization` header, or null when the header is missing or malformed. */
export const bearerToken = (header: string | undefined): string | null => bearerPattern.exec(header ?? "")?.[1] ?? null

/** The refusal of an organization gate that is off: `groups_disabled` for groups, else `api_disabled`. */
export const gateError = (gate: Gate) =>
  gate === "groups"
    ? new GroupsDisabled({ message: "User groups are not enabled for this organization." })
    : new ApiDisabled({ message: `The '${gate}' feature is not enabled for this organization.` })

/** Why `principal` may not use something `admitting` scopes admit (any one of them), if it may not. */
export const scopeRefusal = (principal: Principal, admitting: ReadonlyArray<ApiScope>): InsufficientScope | null => {
  if (admitting.some((one) => principal.scopes.has(one))) return null
  const roleNote = principal.key.kind === "personal" && principal.member ? ` for a member with role '${principal.member.role}'` : ""
  const named = admitting.length === 1 ? `the scope '${admitting[0]}'` : `one of the scopes ${admitting.map((one) => `'${one}'`).join(", ")}`
  return new InsufficientScope({ message: `This key lacks ${named}${roleNote}.` })
}

/** Why `principal` may not pass `rule`, if it may not: plan, then gate, then scopes. */
export const refusalOf = (principal: Principal, rule: AdmissionRule): ApiDisabled | GroupsDisabled | InsufficientScope | null => {
  const org = principal.organization
  if (rule.plans !== undefined && !rule.plans.allowed.includes(org.plan)) {
    return new ApiDisabled({ message: `${rule.plans.door}; this organization is on ${org.plan}.` })
  }
  if (rule.gate !== undefined && !org.gates.has(rule.gate)) return gateError(rule.gate)
  return rule.scopes.length === 0 ? null : scopeRefusal(principal, rule.scopes)
}

/** Authorizes an authenticated caller, then counts the request against its key's rate. */
export const admitPrincipal = (principal: Principal, rule: AdmissionRule): Effect.Effect<Principal, AdmissionFailure, RateLimiter | RequestRate> =>
  Effect.flatMap(makeAdmission, (admission) => admission.principal(principal, rule))

/** {@link admitBearer} and {@link admitPrincipal} with their services resolved once (for a door's hot path). */
export const makeAdmission = Effect.gen(function* () {
  const limiter = yield* RateLimiter
  const rate = yield* RequestRate
  const principalAdmitted = (principal: Principal, rule: AdmissionRule): Effect.Effect<Principal, AdmissionFailure> => {
    const refusal = refusalOf(principal, rule)
    return refusal !== null ? Effect.fail(refusal) : Effect.as(limiter.take(rate, principal.key.id), principal)
  }
  return {
    /** Authorizes an authenticated caller, then counts the request. */
    principal: principalAdmitted,
    /** Authenticates `token` with `accounts`, then as `principal`. */
    token: (accounts: AccountsService, token: string | null, rule: AdmissionRule): Effect.Effect<Principal, AdmissionFailure> =>
      token === null ? Effect.fail(unauthorized) : Effect.flatMap(accounts.authenticate(token), (principal) => principalAdmitted(principal, rule))
  }
})

const unauthorized = new Unauthorized({ message: "Send the API key in the header 'Authorization: Bearer <API_KEY>'." })

/** The whole admission of a request's `Authorization` header: authenticate, authorize, count. */
export const admitBearer = (
  authorization: string | undefined,
  rule: AdmissionRule
): Effect.Effect<Principal, AdmissionFailure, AccountsService | RateLimiter | RequestRate> =>
  Effect.flatMap(AccountsService, (accounts) => Effect.flatMap(makeAdmission, (admission) => admission.token(accounts, bearerToken(authorization), rule)))

/** The rule of a REST endpoint: the External API's plans, the endpoint's gate and scopes. */
export const restRule = (scopes: ReadonlyArray<ApiScope>, gate: Gate | undefined): AdmissionRule => ({
  scopes,
  gate,
  plans: { allowed: apiPlans, door: "The External API is on the Pro and Agency plans" }
})
