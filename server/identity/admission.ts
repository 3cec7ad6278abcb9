/**
 * The one admission pipeline of every door: authenticate (the credential of the door's kind: an
 * API key or MCP sign-in token, a Portal session cookie, an OAuth client), authorize (plan, gate,
 * scope or role), count the request against its credential kind's rate, and only then the
 * principal. A refused request is never counted, whichever door it came through; an admitted one
 * is counted once. The doors: the router, the fast lane, MCP over HTTP and stdio (keys and sign-in
 * tokens, {@link makeAdmission}), the Portal (`portal/admission.ts`) and the OAuth endpoints of MCP
 * sign-in (`mcp/sign-in/admission.ts`), each through {@link admissionPipeline}.
 */
import { Effect } from "effect"
import { ApiDisabled, type ApiKeyRevoked, GroupsDisabled, InsufficientScope, type InvalidApiKey, type RateLimited, Unauthorized } from "../platform/errors.js"
import { type RateLimit, RateLimiter, RequestRate } from "../platform/rate-limiter.js"
import { actFor } from "../platform/sql/acting-organization.js"
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

/**
 * The kinds of credential the doors admit, each with its rate rule: whom an admitted request counts
 * against. Every kind counts against the one per-minute figure in force (`RequestRate`: the spec's
 * 120, `--rate-limit`), each in buckets of its own.
 */
export const credentialKinds = {
  /** An API key, or an MCP sign-in token (its session's own key row): counted per key, as the spec says. */
  apiKey: { countAs: (keyId: string): string => keyId },
  /** A Portal session cookie: counted per end user, so every session and Portal of one person share a budget. */
  portalSession: { countAs: (endUserId: string): string => `end-user:${endUserId}` },
  /** A caller of the OAuth endpoints (public clients hold no secret): counted per client address. */
  oauthClient: { countAs: (address: string): string => `address:${address}` }
} as const

/** The steps of one admission: who calls, whether they may, and whom the request counts against. */
export interface AdmissionSteps<Who, Refusal> {
  /** Who calls, by the door's credential, or the refusal (401, no session, unknown client). */
  readonly authenticate: Effect.Effect<Who, Refusal>
  /** Why `who` may not make this request (plan, gate, scope or role), or null. */
  readonly authorize: (who: Who) => Refusal | null
  /** The rate bucket an admitted request counts against: its credential kind's rule (`credentialKinds`). */
  readonly countAs: (who: Who) => string
  /** The organization an admitted request acts for (its writes contend with that organization's only), if any. */
  readonly organizationOf?: ((who: Who) => string) | undefined
}

/** One admission through its steps, with the rate and limiter in force. */
export type AdmissionPipeline = <Who, Refusal>(steps: AdmissionSteps<Who, Refusal>) => Effect.Effect<Who, Refusal | RateLimited>

/**
 * Steps 2 and 3 for `who`, already authenticated: its refusal (counted by no one), else one request
 * counted against `countAs(who)`, the rest of the request acting for `organizationOf(who)`.
 */
const decide = <Who, Refusal>(
  limiter: RateLimiter,
  rate: RateLimit,
  who: Who,
  refusal: Refusal | null,
  countAs: (who: Who) => string,
  organizationOf: ((who: Who) => string) | undefined
): Effect.Effect<Who, Refusal | RateLimited> => {
  if (refusal !== null) return Effect.fail(refusal)
  const counted = Effect.as(limiter.take(rate, countAs(who)), who)
  return organizationOf === undefined ? counted : Effect.zipLeft(counted, actFor(organizationOf(who)))
}

/** The one admission pipeline (authenticate, authorize, count, principal) with its services resolved once. */
export const admissionPipeline: Effect.Effect<AdmissionPipeline, never, RateLimiter | RequestRate> = Effect.gen(function* () {
  const limiter = yield* RateLimiter
  const rate = yield* RequestRate
  return (steps) =>
    Effect.flatMap(steps.authenticate, (who) => decide(limiter, rate, who, steps.authorize(who), steps.countAs, steps.organizationOf))
})

/** Authorizes an authenticated caller, then counts the request against its key's rate. */
export const admitPrincipal = (principal: Principal, rule: AdmissionRule): Effect.Effect<Principal, AdmissionFailure, RateLimiter | RequestRate> =>
  Effect.flatMap(makeAdmission, (admission) => admission.principal(principal, rule))

/** A key's rate bucket: the key's own (a sign-in token's is its session's key row). */
const keyBucket = (principal: Principal): string => credentialKinds.apiKey.countAs(principal.key.id)
const keyOrganization = (principal: Principal): string => principal.organization.id

/** {@link admitBearer} and {@link admitPrincipal} with their services resolved once (for a door's hot path). */
export const makeAdmission = Effect.gen(function* () {
  const limiter = yield* RateLimiter
  const rate = yield* RequestRate
  const principalAdmitted = (principal: Principal, rule: AdmissionRule): Effect.Effect<Principal, AdmissionFailure> =>
    decide(limiter, rate, principal, refusalOf(principal, rule), keyBucket, keyOrganization)
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
