/**
 * SQL of MCP sign-in: registered clients, one-time email codes and workspace-choice tickets,
 * authorization codes, sessions and the key row each session acts through. Write statements run
 * inside the service's transactions; the per-request token lookup runs on the read connection.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { OrganizationRow } from "../../platform/accounts/repo.js"
import type { Role } from "../../platform/accounts/domain.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import type { OAuthClient, Workspace } from "./domain.js"

/** A one-time email code row. */
export interface SignInCodeRow {
  readonly id: string
  readonly email_key: string
  readonly resource: string
  readonly code_hash: string
  readonly tries: number
  readonly expires_at: number
}

/** An authorization code row. */
export interface AuthorizationCodeRow {
  readonly id: string
  readonly client_id: string
  readonly redirect_uri: string
  readonly code_challenge: string
  readonly resource: string
  readonly scope: string | null
  readonly organization_id: string
  readonly member_id: string
  readonly expires_at: number
  readonly used_at: string | null
  readonly session_id: string | null
}

/** A session row with its member's state, as token requests read it. */
export interface SessionRow {
  readonly id: string
  readonly organization_id: string
  readonly member_id: string
  readonly client_id: string
  readonly key_id: string
  readonly resource: string
  readonly scope: string | null
  readonly access_expires_at: number
  readonly refresh_expires_at: number
  readonly revoked_at: string | null
  readonly member_removed_at: string | null
}

/** What authentication of an access token reads in one indexed lookup. */
export interface AccessRow extends SessionRow {
  readonly client_name: string
  readonly m_email: string
  readonly m_role: Role
  readonly m_created_at: string
  readonly k_name: string
  readonly k_prefix: string
  readonly k_created_at: string
  readonly o_slug: string
  readonly o_name: string
  readonly o_plan: OrganizationRow["plan"]
  readonly o_gates: string
  readonly o_credits_remaining: number
  readonly o_credits_used: number
  readonly o_created_at: string
}

/** A session as the admin list shows it. */
export interface SessionListRow {
  readonly id: string
  readonly client_name: string
  readonly resource: string
  readonly created_at: string
  readonly last_used_at: string | null
  readonly refresh_expires_at: number
  readonly revoked_at: string | null
}

const sessionColumns = `s.id, s.organization_id, s.member_id, s.client_id, s.key_id, s.resource, s.scope,
  s.access_expires_at, s.refresh_expires_at, s.revoked_at, m.removed_at AS member_removed_at`

/** MCP sign-in in SQL. */
export class McpSignInRepo extends Effect.Service<McpSignInRepo>()("svc/McpSignInRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const first = <A>(rows: ReadonlyArray<A>): A | null => rows[0] ?? null
    const changed = (rows: ReadonlyArray<unknown>) => rows.length === 1
    return {
      /** Records a registered client. */
      insertClient: (client: OAuthClient, metadata: string, at: string) =>
        Effect.orDie(
          sql`INSERT INTO mcp_oauth_clients (id, name, redirect_uris, metadata, created_at)
            VALUES (${client.id}, ${client.name}, ${JSON.stringify(client.redirectUris)}, ${metadata}, ${at})`
        ),

      /** A registered client, or null. */
      client: (id: string) =>
        Effect.orDie(
          Effect.map(sql<{ id: string; name: string; redirect_uris: string }>`SELECT id, name, redirect_uris FROM mcp_oauth_clients WHERE id = ${id}`, (rows) => {
            const row = rows[0]
            return row ? ({ id: row.id, name: row.name, redirectUris: JSON.parse(row.redirect_uris) as Array<string> } satisfies OAuthClient) : null
          })
        ),

      /** The active memberships of an email address (normalised), with their organizations; one organization when `slug` is given. */
      workspaces: (emailKey: string, slug: string | null) =>
        Effect.orDie(
          sql<{ member_id: string; organization_id: string; slug: string; name: string; email: string }>`SELECT m.id AS member_id,
              o.id AS organization_id, o.slug, o.name, m.email FROM members m JOIN organizations o ON o.id = m.organization_id
            WHERE lower(m.email) = ${emailKey} AND m.removed_at IS NULL ${slug === null ? sql`` : sql`AND o.slug = ${slug}`}
            ORDER BY o.name, o.slug`
        ).pipe(
          Effect.map((rows) => ({
            email: rows[0]?.email ?? null,
            workspaces: rows.map((row): Workspace => ({ memberId: row.member_id, organizationId: row.organization_id, slug: row.slug, name: row.name }))
          }))
        ),

      /** How many codes went to the address since `since` (ISO time). */
      codesSince: (emailKey: string, since: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ n: number }>`SELECT count(*) AS n FROM mcp_sign_in_codes WHERE email_key = ${emailKey} AND created_at > ${since}`,
            (rows) => Number(rows[0]?.n ?? 0)
          )
        ),

      /** Spends every unused code of the address (a new one replaces them). */
      spendCodes: (emailKey: string, at: string) =>
        Effect.orDie(sql`UPDATE mcp_sign_in_codes SET used_at = ${at} WHERE email_key = ${emailKey} AND used_at IS NULL`),

      /** Records a new code. */
      insertCode: (row: SignInCodeRow & { readonly created_at: string }) =>
        Effect.orDie(sql`INSERT INTO mcp_sign_in_codes ${sql.insert({ ...row, used_at: null, choice_hash: null, chosen_at: null })}`),

      /** The newest unused code of the address for the MCP address `resource`, or null. */
      liveCode: (emailKey: string, resource: string) =>
        Effect.orDie(
          Effect.map(
            sql<SignInCodeRow>`SELECT id, email_key, resource, code_hash, tries, expires_at FROM mcp_sign_in_codes
              WHERE email_key = ${emailKey} AND resource = ${resource} AND used_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1`,
            first
          )
        ),

      /** Counts one wrong answer against a code. */
      countTry: (id: string) => Effect.orDie(sql`UPDATE mcp_sign_in_codes SET tries = tries + 1 WHERE id = ${id}`),

      /** Spends a code by its right answer and keeps the hash of the workspace-choice ticket; false when it was already spent. */
      useCode: (id: string, choiceHash: string, at: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ id: string }>`UPDATE mcp_sign_in_codes SET used_at = ${at}, choice_hash = ${choiceHash}
              WHERE id = ${id} AND used_at IS NULL RETURNING id`,
            changed
          )
        ),

      /** Spends a workspace-choice ticket that is still valid; answers its address and email, or null. */
      useTicket: (choiceHash: string, now: number, at: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ email_key: string; resource: string }>`UPDATE mcp_sign_in_codes SET chosen_at = ${at}
              WHERE choice_hash = ${choiceHash} AND chosen_at IS NULL AND expires_at > ${now} RETURNING email_key, resource`,
            first
          )
        ),

      /** Records an authorization code. */
      insertAuthorizationCode: (row: Omit<AuthorizationCodeRow, "used_at" | "session_id"> & { readonly code_hash: string; readonly created_at: string }) =>
        Effect.orDie(sql`INSERT INTO mcp_authorization_codes ${sql.insert({ ...row, used_at: null, session_id: null })}`),

      /** An authorization code by its hash, or null. */
      authorizationCode: (codeHash: string) =>
        Effect.orDie(
          Effect.map(
            sql<AuthorizationCodeRow>`SELECT id, client_id, redirect_uri, code_challenge, resource, scope, organization_id, member_id,
              expires_at, used_at, session_id FROM mcp_authorization_codes WHERE code_hash = ${codeHash}`,
            first
          )
        ),

      /** Spends an authorization code for the session it opened; false when it was already spent. */
      useAuthorizationCode: (id: string, sessionId: string, at: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ id: string }>`UPDATE mcp_authorization_codes SET used_at = ${at}, session_id = ${sessionId}
              WHERE id = ${id} AND used_at IS NULL RETURNING id`,
            changed
          )
        ),

      /** Whether the member is still in the organization. */
      memberActive: (memberId: string) =>
        Effect.orDie(
          Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM members WHERE id = ${memberId} AND removed_at IS NULL`, (rows) => Number(rows[0]?.n ?? 0) > 0)
        ),

      /** Records the key row a session acts through: personal, every scope its member's role allows, a secret nobody holds. */
      insertSessionKey: (row: { id: string; organization_id: string; member_id: string; name: string; secret_hash: string; created_at: string }) =>
        Effect.orDie(
          sql`INSERT INTO api_keys (id, organization_id, kind, member_id, name, prefix, secret_hash, scopes, created_at, sign_in)
            VALUES (${row.id}, ${row.organization_id}, 'personal', ${row.member_id}, ${row.name}, 'sign-in', ${row.secret_hash}, 'all', ${row.created_at}, 1)`
        ),

      /** Records a session. */
      insertSession: (row: {
        readonly id: string
        readonly organization_id: string
        readonly member_id: string
        readonly client_id: string
        readonly key_id: string
        readonly resource: string
        readonly scope: string | null
        readonly access_hash: string
        readonly access_expires_at: number
        readonly refresh_hash: string
        readonly refresh_expires_at: number
        readonly created_at: string
      }) => Effect.orDie(sql`INSERT INTO mcp_sessions ${sql.insert({ ...row, last_used_at: null, revoked_at: null })}`),

      /** The session holding this refresh token hash, or null. */
      sessionByRefresh: (refreshHash: string) =>
        Effect.orDie(
          Effect.map(
            sql<SessionRow>`SELECT ${sql.literal(sessionColumns)} FROM mcp_sessions s JOIN members m ON m.id = s.member_id WHERE s.refresh_hash = ${refreshHash}`,
            first
          )
        ),

      /** The session holding this access or refresh token hash, or null. */
      sessionByToken: (hash: string) =>
        Effect.orDie(
          Effect.map(
            sql<SessionRow>`SELECT ${sql.literal(sessionColumns)} FROM mcp_sessions s JOIN members m ON m.id = s.member_id
              WHERE s.access_hash = ${hash} OR s.refresh_hash = ${hash}`,
            first
          )
        ),

      /** Replaces a session's tokens if its refresh token is still `oldRefreshHash`; false when another refresh won. */
      rotate: (id: string, oldRefreshHash: string, tokens: { access_hash: string; access_expires_at: number; refresh_hash: string; refresh_expires_at: number }) =>
        Effect.orDie(
          Effect.map(
            sql<{ id: string }>`UPDATE mcp_sessions SET access_hash = ${tokens.access_hash}, access_expires_at = ${tokens.access_expires_at},
              refresh_hash = ${tokens.refresh_hash}, refresh_expires_at = ${tokens.refresh_expires_at}
              WHERE id = ${id} AND refresh_hash = ${oldRefreshHash} AND revoked_at IS NULL RETURNING id`,
            changed
          )
        ),

      /** Ends a session and its key row (idempotent). */
      revokeSession: (id: string, at: string) =>
        Effect.orDie(
          Effect.zipRight(
            sql`UPDATE mcp_sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`,
            sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = (SELECT key_id FROM mcp_sessions WHERE id = ${id}) AND revoked_at IS NULL`
          )
        ),

      /** Notes when a session was last used. */
      touch: (id: string, at: string) => Effect.orDie(sql`UPDATE mcp_sessions SET last_used_at = ${at} WHERE id = ${id}`),

      /** One indexed lookup by access token hash (on the read connection): the session, its member, key, client and organization. */
      access: (accessHash: string) =>
        Effect.orDie(
          reader.all<AccessRow>(
            `SELECT ${sessionColumns}, c.name AS client_name, m.email AS m_email, m.role AS m_role, m.created_at AS m_created_at,
              k.name AS k_name, k.prefix AS k_prefix, k.created_at AS k_created_at,
              o.slug AS o_slug, o.name AS o_name, o.plan AS o_plan, o.gates AS o_gates, o.credits_remaining AS o_credits_remaining,
              o.credits_used AS o_credits_used, o.created_at AS o_created_at
            FROM mcp_sessions s
            JOIN members m ON m.id = s.member_id
            JOIN api_keys k ON k.id = s.key_id
            JOIN mcp_oauth_clients c ON c.id = s.client_id
            JOIN organizations o ON o.id = s.organization_id
            WHERE s.access_hash = ?`,
            [accessHash]
          )
        ).pipe(Effect.map(first)),

      /** A member's sessions, newest first. */
      sessionsOf: (memberId: string) =>
        Effect.orDie(
          sql<SessionListRow>`SELECT s.id, c.name AS client_name, s.resource, s.created_at, s.last_used_at, s.refresh_expires_at, s.revoked_at
            FROM mcp_sessions s JOIN mcp_oauth_clients c ON c.id = s.client_id WHERE s.member_id = ${memberId} ORDER BY s.created_at DESC, s.id`
        ),

      /** A session of the organization, as the admin list shows it, or null. */
      sessionInOrganization: (organizationId: string, id: string) =>
        Effect.orDie(
          Effect.map(
            sql<SessionListRow>`SELECT s.id, c.name AS client_name, s.resource, s.created_at, s.last_used_at, s.refresh_expires_at, s.revoked_at
              FROM mcp_sessions s JOIN mcp_oauth_clients c ON c.id = s.client_id WHERE s.organization_id = ${organizationId} AND s.id = ${id}`,
            first
          )
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
