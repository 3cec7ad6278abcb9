/**
 * Organizations, members and API keys: the dashboard's part (driven by the CLI) and authentication of
 * bearer keys (driven by every request).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppClock, isoAt } from "../platform/clock.js"
import { ApiKeyRevoked, Conflict, InvalidApiKey, InvalidRequest, NotFound } from "../platform/errors.js"
import { newId, randomToken, sha256Hex } from "../platform/ids.js"
import { ServerSettings } from "../platform/settings-repo.js"
import { CacheVersions } from "../platform/sql/cache-versions.js"
import { dataVersionCache } from "../platform/sql/data-version-cache.js"
import { ReadConnection } from "../platform/sql/read-connection.js"
import { transactionsOn } from "../platform/sql/database.js"
import {
  type ApiKey,
  type ApiScope,
  apiPlans,
  effectiveScopes,
  type Gate,
  type KeyKind,
  keyLimits,
  type Member,
  type Organization,
  type Plan,
  planCaps,
  type Principal,
  type Role,
  scopes as allScopes
} from "./domain.js"
import { AccountsRepo, type Credential } from "./repo.js"

const slugPattern = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/
const emailPattern = /^[^\s@]+@[^\s@]+$/
const secretPattern = /^svc[op]_[0-9A-Za-z]{40}$/
const lastUsedResolutionMs = 60_000
const credentialCacheSize = 10_000

/** The organization made on the first start of an empty data directory. */
export const defaultOrganization = { slug: "default", name: "Default", adminEmail: "admin@svc.local" } as const

/** Why a credential may not be used, if it may not. */
const refuse = (credential: Credential | null): InvalidApiKey | ApiKeyRevoked | null => {
  if (!credential) return new InvalidApiKey({ message: "The API key matches no active key." })
  const { key, member } = credential
  if (key.revokedAt) return new ApiKeyRevoked({ message: `The API key ${key.prefix}… was revoked.` })
  if (key.kind === "personal" && (!member || member.removed)) {
    return new ApiKeyRevoked({
      message: `The API key ${key.prefix}… stopped working when its member left the organization.`
    })
  }
  return null
}

/** The principals of usable credentials, built once per credential read (credentials are never changed once read). */
const principals = new WeakMap<Credential, Principal>()

/** The principal a usable credential stands for: its organization, key, member (unless removed) and scopes. */
const principalOf = (credential: Credential): Principal => {
  let principal = principals.get(credential)
  if (principal === undefined) {
    const { key, organization, member } = credential
    principal = {
      organization,
      key,
      member: member && !member.removed ? member : null,
      scopes: effectiveScopes(key.kind, key.scopes, member?.role ?? null)
    }
    principals.set(credential, principal)
  }
  return principal
}

/** A newly created key: the record and its secret, which is never shown again. */
export interface CreatedKey {
  readonly key: ApiKey
  readonly secret: string
}

/** How to create a key. */
export interface KeyRequest {
  readonly name: string
  readonly scopes: ReadonlyArray<string> | "all"
  readonly personalFor?: string | undefined
}

/** Changes to an organization's settings. */
export interface OrganizationChanges {
  readonly plan?: Plan | undefined
  readonly enable?: ReadonlyArray<Gate> | undefined
  readonly disable?: ReadonlyArray<Gate> | undefined
  readonly credits?: number | undefined
}

/** Organizations, members, keys and authentication. */
export class AccountsService extends Effect.Service<AccountsService>()("svc/AccountsService", {
  effect: Effect.gen(function* () {
    const repo = yield* AccountsRepo
    const settings = yield* ServerSettings
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)
    const clock = yield* AppClock
    const lastTouched = new Map<string, number>()
    /**
     * Credentials by secret hash, each reused only while no other process committed and no commit
     * of this one wrote the tables they are read from.
     */
    const credentialsVersion = (yield* CacheVersions).of(["organizations", "members", "api_keys"])
    const credentials = dataVersionCache<string, Credential | null>(credentialsVersion, credentialCacheSize)
    const credentialByHash = (secretHash: string) =>
      credentials.get(secretHash, repo.credentialByHash(secretHash), (credential) => credential !== null)
    const now = () => isoAt(clock.now())

    const organization = (slug: string) =>
      Effect.flatMap(repo.organizationBySlug(slug), (org) =>
        org ? Effect.succeed(org) : Effect.fail(new NotFound({ message: `No organization with slug '${slug}'.` }))
      )

    const activeMember = (org: Organization, email: string) =>
      Effect.flatMap(repo.activeMemberByEmail(org.id, email), (member) =>
        member
          ? Effect.succeed(member)
          : Effect.fail(new NotFound({ message: `No member '${email}' in organization '${org.slug}'.` }))
      )

    const createOrganization = (input: { slug: string; name?: string | undefined; plan?: Plan | undefined; gates?: ReadonlyArray<Gate> }) =>
      Effect.gen(function* () {
        if (!slugPattern.test(input.slug)) {
          return yield* new InvalidRequest({
            message: "slug: use 1 to 40 lowercase letters, digits and inner hyphens."
          })
        }
        const plan = input.plan ?? "pro"
        const org: Organization = {
          id: newId(),
          slug: input.slug,
          name: input.name ?? input.slug,
          plan,
          gates: new Set(input.gates ?? []),
          creditsRemaining: planCaps[plan].monthlyCredits,
          creditsUsed: 0,
          createdAt: now()
        }
        return yield* inTransaction(
          Effect.gen(function* () {
            if (yield* repo.organizationBySlug(org.slug)) {
              return yield* new Conflict({ message: `An organization with slug '${org.slug}' already exists.` })
            }
            yield* repo.insertOrganization(org)
            return org
          })
        )
      })

    const addMember = (slug: string, email: string, role: Role) =>
      Effect.gen(function* () {
        if (!emailPattern.test(email)) return yield* new InvalidRequest({ message: `email: '${email}' is not an email address.` })
        const org = yield* organization(slug)
        return yield* inTransaction(
          Effect.gen(function* () {
            if (yield* repo.activeMemberByEmail(org.id, email)) {
              return yield* new Conflict({ message: `'${email}' is already a member of '${slug}'.` })
            }
            const member: Member = { id: newId(), organizationId: org.id, email, role, createdAt: now() }
            yield* repo.insertMember(member)
            return member
          })
        )
      })

    const createKey = (slug: string, request: KeyRequest) =>
      Effect.gen(function* () {
        const org = yield* organization(slug)
        const name = request.name.trim()
        if (name.length === 0 || name.length > 100) {
          return yield* new InvalidRequest({ message: "name: give the key a name of 1 to 100 characters." })
        }
        const unknown = request.scopes === "all" ? [] : request.scopes.filter((s) => !allScopes.includes(s as ApiScope))
        if (unknown.length > 0) {
          return yield* new InvalidRequest({
            message: `scopes: unknown scope ${unknown.map((s) => `'${s}'`).join(", ")}; known: ${allScopes.join(", ")}.`
          })
        }
        if (request.scopes !== "all" && request.scopes.length === 0) {
          return yield* new InvalidRequest({ message: "scopes: give at least one scope, or every scope." })
        }
        const kind: KeyKind = request.personalFor === undefined ? "organization" : "personal"
        if (kind === "organization" && !apiPlans.includes(org.plan)) {
          return yield* new InvalidRequest({
            message: `Organization keys are on the Pro and Agency plans; '${slug}' is on ${org.plan}.`
          })
        }
        const member = request.personalFor === undefined ? null : yield* activeMember(org, request.personalFor)
        const secret = `svc${kind === "organization" ? "o" : "p"}_${randomToken(40)}`
        const key: ApiKey = {
          id: newId(),
          organizationId: org.id,
          kind,
          memberId: member?.id ?? null,
          name,
          prefix: secret.slice(0, 12),
          // An organization key's scopes are fixed at creation; a personal key may follow every scope.
          scopes: request.scopes === "all" ? (kind === "organization" ? [...allScopes] : "all") : (request.scopes as Array<ApiScope>),
          createdAt: now(),
          lastUsedAt: null,
          revokedAt: null
        }
        return yield* inTransaction(
          Effect.gen(function* () {
            if (member) {
              if ((yield* repo.countActivePersonalKeys(member.id)) >= keyLimits.personalPerMember) {
                return yield* new InvalidRequest({
                  message: `${member.email} already has ${keyLimits.personalPerMember} active personal keys; revoke one first.`
                })
              }
            } else if ((yield* repo.countActiveOrganizationKeys(org.id)) >= keyLimits.organization) {
              return yield* new InvalidRequest({
                message: `'${slug}' already has ${keyLimits.organization} active organization keys; revoke one first.`
              })
            }
            yield* repo.insertKey(key, sha256Hex(secret))
            return { key, secret } satisfies CreatedKey
          })
        )
      })

    return {
      createOrganization,
      organization,
      /** An active member of the organization `slug` by email (404 when none). */
      member: (slug: string, email: string) => Effect.flatMap(organization(slug), (org) => activeMember(org, email)),

      /** Applies plan, gate and credit changes to an organization. */
      setOrganization: (slug: string, changes: OrganizationChanges) =>
        Effect.gen(function* () {
          if (changes.credits !== undefined && (!Number.isInteger(changes.credits) || changes.credits < 0)) {
            return yield* new InvalidRequest({ message: "credits: give a whole number of 0 or more." })
          }
          return yield* inTransaction(
            Effect.gen(function* () {
              const org = yield* organization(slug)
              const gates = new Set(org.gates)
              for (const gate of changes.enable ?? []) gates.add(gate)
              for (const gate of changes.disable ?? []) gates.delete(gate)
              const updated: Organization = {
                ...org,
                plan: changes.plan ?? org.plan,
                gates,
                creditsRemaining: changes.credits ?? org.creditsRemaining
              }
              yield* repo.updateOrganization(updated)
              return updated
            })
          )
        }),

      addMember,

      /** Changes a member's role; their personal keys follow on the next call. */
      setMemberRole: (slug: string, email: string, role: Role) =>
        Effect.gen(function* () {
          const org = yield* organization(slug)
          const member = yield* activeMember(org, email)
          yield* repo.setMemberRole(member.id, role)
          return { ...member, role }
        }),

      /** Removes a member; their personal keys stop working at once (`api_key_revoked`). */
      removeMember: (slug: string, email: string) =>
        Effect.gen(function* () {
          const org = yield* organization(slug)
          const member = yield* activeMember(org, email)
          yield* repo.removeMember(member.id, now())
          return member
        }),

      createKey,

      /** Every key of an organization, revoked ones included, oldest first. */
      listKeys: (slug: string) => Effect.flatMap(organization(slug), (org) => repo.listKeys(org.id)),

      /** Revokes a key; idempotent. */
      revokeKey: (slug: string, keyId: string) =>
        Effect.gen(function* () {
          const org = yield* organization(slug)
          const key = yield* repo.keyById(org.id, keyId)
          if (!key) return yield* new NotFound({ message: `No key '${keyId}' in organization '${slug}'.` })
          if (key.revokedAt) return key
          const at = now()
          yield* repo.revokeKey(key.id, at)
          return { ...key, revokedAt: at }
        }),

      /** Resolves a bearer secret to the calling principal, or fails with the spec's 401 codes. */
      authenticate: (secret: string) =>
        secretPattern.test(secret)
          ? Effect.flatMap(credentialByHash(sha256Hex(secret)), (credential) => {
              const refusal = refuse(credential)
              if (refusal) return Effect.fail(refusal)
              const principal = principalOf(credential!)
              const { key } = principal
              const nowMs = clock.now()
              if (nowMs - (lastTouched.get(key.id) ?? 0) < lastUsedResolutionMs) return Effect.succeed(principal)
              lastTouched.set(key.id, nowMs)
              return Effect.as(repo.touchKey(key.id, isoAt(nowMs)), principal)
            })
          : Effect.fail(new InvalidApiKey({ message: "The API key matches no active key." })),

      /**
       * Once per data directory (the first `svc serve`): makes sure organization `default` (Pro, gates
       * apps, groups and mcp on) exists with an admin member, and creates an all-scopes organization
       * key for it, whose secret is returned this once.
       */
      bootstrap: inTransaction(
        Effect.gen(function* () {
          if ((yield* settings.setting("bootstrapped_at")) !== null) return null
          yield* settings.putSettingIfAbsent("bootstrapped_at", now())
          let org = yield* repo.organizationBySlug(defaultOrganization.slug)
          if (!org) {
            org = {
              id: newId(),
              slug: defaultOrganization.slug,
              name: defaultOrganization.name,
              plan: "pro",
              gates: new Set<Gate>(["apps", "groups", "mcp"]),
              creditsRemaining: planCaps.pro.monthlyCredits,
              creditsUsed: 0,
              createdAt: now()
            }
            yield* repo.insertOrganization(org)
          }
          if (!(yield* repo.activeMemberByEmail(org.id, defaultOrganization.adminEmail))) {
            yield* repo.insertMember({
              id: newId(),
              organizationId: org.id,
              email: defaultOrganization.adminEmail,
              role: "admin",
              createdAt: now()
            })
          }
          if (!apiPlans.includes(org.plan)) return { organization: org, secret: null }
          const { secret } = yield* Effect.orDie(createKey(org.slug, { name: "bootstrap", scopes: "all" }))
          return { organization: org, secret: secret as string | null }
        })
      ),

      /** Every organization, by slug (administration: `svc orgs list`, `svc status`). */
      organizations: repo.organizations,

      /** Whether the first `svc serve` of this database has made organization `default` and its key (`bootstrap`). */
      bootstrapped: Effect.map(settings.setting("bootstrapped_at"), (at) => at !== null),

      /** The organization `svc serve` reports: `default`, when it exists. */
      defaultOrganization: repo.organizationBySlug(defaultOrganization.slug)
    }
  }),
  dependencies: [AccountsRepo.Default, ServerSettings.Default, ReadConnection.Default, CacheVersions.Default]
}) {}
