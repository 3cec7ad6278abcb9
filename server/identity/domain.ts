/**
 * Organizations, members, API keys: plans, gates, roles and scopes, and the rules that tie them.
 */
import { Schema } from "effect"
import { type ApiScope, gates, plans, roles, scopeMinimumRole, scopes } from "./allowed-values.js"

// The plain lists live in `allowed-values.ts` (the CLI reads them without loading effect).
export { type ApiScope, gates, plans, roles, scopeMinimumRole, scopes }

/** An organization's plan. */
export const Plan = Schema.Literal(...plans)
export type Plan = typeof Plan.Type

/** A feature gate. */
export const Gate = Schema.Literal(...gates)
export type Gate = typeof Gate.Type

/** A member's role. */
export const Role = Schema.Literal(...roles)
export type Role = typeof Role.Type

/** A scope, as a schema. */
export const ApiScopeSchema = Schema.Literal(...(scopes as [ApiScope, ...Array<ApiScope>]))

/** Kinds of API key. */
export const KeyKind = Schema.Literal("organization", "personal")
export type KeyKind = typeof KeyKind.Type

/** Plan caps: Knowledgebases, sources per Knowledgebase, monthly credits. */
export const planCaps: Record<Plan, { knowledgebases: number; sourcesPerKnowledgebase: number; monthlyCredits: number }> = {
  trial: { knowledgebases: 2, sourcesPerKnowledgebase: 20, monthlyCredits: 100 },
  creator: { knowledgebases: 5, sourcesPerKnowledgebase: 100, monthlyCredits: 1_000 },
  pro: { knowledgebases: 50, sourcesPerKnowledgebase: 1_000, monthlyCredits: 10_000 },
  agency: { knowledgebases: 200, sourcesPerKnowledgebase: 5_000, monthlyCredits: 50_000 },
  lifetime: { knowledgebases: 20, sourcesPerKnowledgebase: 500, monthlyCredits: 5_000 }
}

/** Plans on which the External API and organization keys are available. */
export const apiPlans: ReadonlyArray<Plan> = ["pro", "agency"]
/** Plans on which the MCP server is available. */
export const mcpPlans: ReadonlyArray<Plan> = ["creator", "pro", "agency", "lifetime"]

/** Key count limits (spec: Limits). */
export const keyLimits = { organization: 20, personalPerMember: 5 } as const

/** Whether `role` is at least `minimum`. */
export const roleAtLeast = (role: Role, minimum: Role): boolean => roles.indexOf(role) >= roles.indexOf(minimum)

/** Stored key scopes: an explicit list, or every scope (personal keys only, so later scopes are picked up). */
export type StoredScopes = ReadonlyArray<ApiScope> | "all"

/**
 * The scopes a key may use right now: an organization key's fixed list; a personal key's list (or
 * every scope) capped by its member's current role.
 */
export const effectiveScopes = (
  kind: KeyKind,
  stored: StoredScopes,
  role: Role | null
): ReadonlySet<ApiScope> => {
  const listed = stored === "all" ? scopes : stored
  if (kind === "organization") return new Set(listed)
  if (role === null) return new Set()
  return new Set(listed.filter((scope) => roleAtLeast(role, scopeMinimumRole[scope])))
}

/** An organization as the platform sees it. */
export interface Organization {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly plan: Plan
  readonly gates: ReadonlySet<Gate>
  readonly creditsRemaining: number
  readonly creditsUsed: number
  readonly createdAt: string
}

/**
 * An organization as a caller carries it: everything but its credit balance, which every run and
 * search changes and which is read where it is spent, so that a charge leaves cached credentials
 * valid (`write-tracking.ts`).
 */
export type OrganizationIdentity = Omit<Organization, "creditsRemaining" | "creditsUsed">

/** A member of an organization. */
export interface Member {
  readonly id: string
  readonly organizationId: string
  readonly email: string
  readonly role: Role
  readonly createdAt: string
}

/** An API key record (never the secret). */
export interface ApiKey {
  readonly id: string
  readonly organizationId: string
  readonly kind: KeyKind
  readonly memberId: string | null
  readonly name: string
  readonly prefix: string
  readonly scopes: StoredScopes
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
}

/** Who is calling: resolved from the bearer key on every request. */
export interface Principal {
  readonly organization: OrganizationIdentity
  readonly key: ApiKey
  readonly member: Member | null
  readonly scopes: ReadonlySet<ApiScope>
  /** The MCP connection the call came through (its own activity list), if any. */
  readonly connectionId?: string | undefined
  /** Set when the caller is an MCP sign-in connection (an OAuth session) rather than a personal key. */
  readonly signIn?: SignInConnection | undefined
}

/** An MCP sign-in connection as a principal carries it: the session, its client and the address it was approved for. */
export interface SignInConnection {
  readonly sessionId: string
  readonly clientName: string
  readonly address: string
}

/** How a principal is named as the author of a write: the member's email, or the key's name and prefix. */
export const authorOf = (actor: Principal): string => actor.member?.email ?? `key ${actor.key.name} (${actor.key.prefix}…)`
