/**
 * The token side of MCP sign-in: an authorization code exchanged for a session (PKCE checked, the
 * code single-use and bound to its client and redirect URI; a second use ends the session the
 * first opened), refresh with rotation, revocation, and the access token resolved to the member it
 * acts as on every MCP request. Tokens are opaque and kept hashed; a session is bound to the MCP
 * address it was approved at. The admin side lists and ends a member's sessions.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppClock, isoAt } from "../../platform/clock.js"
import { effectiveScopes, type Principal } from "../domain.js"
import { AccountsRepo, joinedOrganization } from "../repo.js"
import { ApiKeyRevoked, InvalidApiKey, NotFound } from "../../platform/errors.js"
import { newId, randomToken, sha256Hex } from "../../platform/ids.js"
import { transactionsOn } from "../../platform/sql/database.js"
import {
  accessTokenTtlMs,
  newAccessToken,
  newRefreshToken,
  OAuthFailure,
  pkceMatches,
  refreshTokenTtlMs,
  type SignInSession,
  tokenHash,
  type TokenSet
} from "./domain.js"
import { McpSignInRepo } from "./repo.js"
import { type AccessRow, McpSessionRepo, type SessionListRow } from "./session-repo.js"

/** How often a session's `last_used_at` is written at most. */
const lastUsedResolutionMs = 60_000

const invalidGrant = (description: string) => new OAuthFailure({ error: "invalid_grant", description })

/** The answer to a grant its client may not use: an unknown client's too (the token endpoint's admission refuses it so). */
export const notThisClients = {
  code: invalidGrant("The authorization code is not valid for this client."),
  refresh: invalidGrant("The refresh token is not valid for this client.")
} as const

/** An authorization code exchange as the token endpoint received it. */
export interface CodeExchange {
  readonly clientId: string
  readonly code: string
  readonly redirectUri: string
  readonly codeVerifier: string
  /** The `resource` parameter, when sent: it must name the address approved. */
  readonly resource: string | null
}

/** A refresh as the token endpoint received it. */
export interface Refresh {
  readonly clientId: string
  readonly refreshToken: string
  readonly resource: string | null
}

const toSession = (row: SessionListRow): SignInSession => ({
  id: row.id,
  clientName: row.client_name,
  address: row.resource,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  expiresAt: isoAt(row.refresh_expires_at),
  revokedAt: row.revoked_at
})

const principalOf = (row: AccessRow): Principal => {
  const member = { id: row.member_id, organizationId: row.organization_id, email: row.m_email, role: row.m_role, createdAt: row.m_created_at }
  return {
    organization: joinedOrganization(row),
    key: {
      id: row.key_id,
      organizationId: row.organization_id,
      kind: "personal",
      memberId: row.member_id,
      name: row.k_name,
      prefix: row.k_prefix,
      scopes: "all",
      createdAt: row.k_created_at,
      lastUsedAt: null,
      revokedAt: row.revoked_at
    },
    member,
    scopes: effectiveScopes("personal", "all", member.role),
    signIn: { sessionId: row.id, clientName: row.client_name, address: row.resource }
  }
}

/** Sign-in sessions: tokens issued, refreshed, revoked, resolved; listed and ended by an admin. */
export class McpSessions extends Effect.Service<McpSessions>()("svc/McpSessions", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const approvals = yield* McpSignInRepo
    const repo = yield* McpSessionRepo
    const accounts = yield* AccountsRepo
    const clock = yield* AppClock
    const inTransaction = transactionsOn(sql)
    const lastTouched = new Map<string, number>()

    const freshTokens = (now: number) => {
      const access = newAccessToken()
      const refresh = newRefreshToken()
      return {
        access,
        refresh,
        row: { access_hash: tokenHash(access), access_expires_at: now + accessTokenTtlMs, refresh_hash: tokenHash(refresh), refresh_expires_at: now + refreshTokenTtlMs }
      }
    }
    const tokenSet = (access: string, refresh: string, scope: string | null): TokenSet => ({
      access_token: access,
      token_type: "Bearer",
      expires_in: accessTokenTtlMs / 1000,
      refresh_token: refresh,
      ...(scope === null ? {} : { scope })
    })

    const memberSessions = (slug: string, email: string) =>
      Effect.gen(function* () {
        const org = yield* accounts.organizationBySlug(slug)
        if (org === null) return yield* new NotFound({ message: `No organization with slug '${slug}'.` })
        const member = yield* accounts.activeMemberByEmail(org.id, email)
        if (member === null) return yield* new NotFound({ message: `No member '${email}' in organization '${slug}'.` })
        return { org, member }
      })

    return {
      /** Exchanges an authorization code for a new session's tokens (RFC 6749 4.1.3 with PKCE, RFC 7636). */
      exchangeCode: (exchange: CodeExchange): Effect.Effect<TokenSet, OAuthFailure> =>
        Effect.flatten(
          inTransaction(
            Effect.gen(function* () {
              const row = yield* approvals.authorizationCode(tokenHash(exchange.code))
              const now = clock.now()
              if (row === null || row.client_id !== exchange.clientId) return Effect.fail(notThisClients.code)
              if (row.used_at !== null) {
                if (row.session_id !== null) yield* repo.revokeSession(row.session_id, isoAt(now))
                return Effect.fail(invalidGrant("The authorization code was already used; the session it opened is ended."))
              }
              if (row.expires_at <= now) return Effect.fail(invalidGrant("The authorization code expired."))
              if (row.redirect_uri !== exchange.redirectUri) return Effect.fail(invalidGrant("redirect_uri differs from the authorization request's."))
              if (!pkceMatches(exchange.codeVerifier, row.code_challenge)) return Effect.fail(invalidGrant("code_verifier does not match the code_challenge (S256)."))
              if (exchange.resource !== null && exchange.resource !== row.resource) return Effect.fail(invalidGrant("resource differs from the address approved."))
              if (!(yield* approvals.memberActive(row.member_id))) return Effect.fail(invalidGrant("The member is no longer in the organization."))
              const client = yield* approvals.client(row.client_id)
              const sessionId = newId()
              if (client === null || !(yield* approvals.useAuthorizationCode(row.id, sessionId, isoAt(now)))) {
                return Effect.fail(invalidGrant("The authorization code was already used."))
              }
              const keyId = newId()
              yield* repo.insertSessionKey({
                id: keyId,
                organization_id: row.organization_id,
                member_id: row.member_id,
                name: `MCP sign-in: ${client.name}`,
                secret_hash: sha256Hex(randomToken(40)),
                created_at: isoAt(now)
              })
              const tokens = freshTokens(now)
              yield* repo.insertSession({
                id: sessionId,
                organization_id: row.organization_id,
                member_id: row.member_id,
                client_id: row.client_id,
                key_id: keyId,
                resource: row.resource,
                scope: row.scope,
                ...tokens.row,
                created_at: isoAt(now)
              })
              return Effect.succeed(tokenSet(tokens.access, tokens.refresh, row.scope))
            })
          )
        ),

      /** New tokens for a refresh token; the old refresh token (and access token) stop working (rotation). */
      refresh: (refresh: Refresh): Effect.Effect<TokenSet, OAuthFailure> =>
        Effect.flatten(
          inTransaction(
            Effect.gen(function* () {
              const oldHash = tokenHash(refresh.refreshToken)
              const row = yield* repo.sessionByRefresh(oldHash)
              const now = clock.now()
              if (row === null || row.client_id !== refresh.clientId) return Effect.fail(notThisClients.refresh)
              if (row.revoked_at !== null) return Effect.fail(invalidGrant("The sign-in session was revoked."))
              if (row.refresh_expires_at <= now) return Effect.fail(invalidGrant("The refresh token expired; sign in again."))
              if (row.member_removed_at !== null) return Effect.fail(invalidGrant("The member is no longer in the organization."))
              if (refresh.resource !== null && refresh.resource !== row.resource) return Effect.fail(invalidGrant("resource differs from the address approved."))
              const tokens = freshTokens(now)
              if (!(yield* repo.rotate(row.id, oldHash, tokens.row))) return Effect.fail(invalidGrant("The refresh token was already used."))
              return Effect.succeed(tokenSet(tokens.access, tokens.refresh, row.scope))
            })
          )
        ),

      /** Ends the session an access or refresh token of `clientId` belongs to (RFC 7009: unknown tokens are no error). */
      revoke: (clientId: string | null, token: string): Effect.Effect<void> =>
        inTransaction(
          Effect.gen(function* () {
            const row = yield* repo.sessionByToken(tokenHash(token))
            if (row === null || (clientId !== null && row.client_id !== clientId)) return
            yield* repo.revokeSession(row.id, isoAt(clock.now()))
          })
        ),

      /**
       * The member an access token acts as at the MCP address `resource`, or why not: 401
       * `invalid_api_key` (unknown, expired, or approved at the other address) or `api_key_revoked`
       * (session ended, member removed).
       */
      authenticate: (token: string, resource: string): Effect.Effect<Principal, InvalidApiKey | ApiKeyRevoked> =>
        Effect.gen(function* () {
          const row = yield* repo.access(tokenHash(token))
          const now = clock.now()
          if (row === null) return yield* new InvalidApiKey({ message: "The sign-in token matches no session (it may have been refreshed)." })
          if (row.revoked_at !== null) return yield* new ApiKeyRevoked({ message: "This sign-in session was ended; sign in again." })
          if (row.member_removed_at !== null) return yield* new ApiKeyRevoked({ message: "This sign-in stopped working when its member left the organization." })
          if (row.access_expires_at <= now) return yield* new InvalidApiKey({ message: "The sign-in token expired; refresh it." })
          if (row.resource !== resource) {
            return yield* new InvalidApiKey({ message: `This sign-in was approved for the MCP address ${row.resource}, not this one; sign in at this address.` })
          }
          if (now - (lastTouched.get(row.id) ?? 0) >= lastUsedResolutionMs) {
            lastTouched.set(row.id, now)
            yield* repo.touch(row.id, isoAt(now))
          }
          return principalOf(row)
        }),

      /** A member's sign-in sessions, newest first (ended ones too). */
      list: (slug: string, email: string): Effect.Effect<ReadonlyArray<SignInSession>, NotFound> =>
        Effect.flatMap(memberSessions(slug, email), ({ member }) => Effect.map(repo.sessionsOf(member.id), (rows) => rows.map(toSession))),

      /** Ends a session of the organization; its tokens fail the very next request (idempotent). */
      end: (slug: string, sessionId: string): Effect.Effect<SignInSession, NotFound> =>
        Effect.gen(function* () {
          const org = yield* accounts.organizationBySlug(slug)
          if (org === null) return yield* new NotFound({ message: `No organization with slug '${slug}'.` })
          const found = yield* repo.sessionInOrganization(org.id, sessionId)
          if (found === null) return yield* new NotFound({ message: `No sign-in session '${sessionId}' in organization '${slug}'.` })
          if (found.revoked_at === null) yield* inTransaction(repo.revokeSession(found.id, isoAt(clock.now())))
          return toSession((yield* repo.sessionInOrganization(org.id, sessionId)) ?? found)
        })
    }
  }),
  dependencies: [McpSignInRepo.Default, McpSessionRepo.Default, AccountsRepo.Default]
}) {}
