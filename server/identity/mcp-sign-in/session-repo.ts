/**
 * SQL of MCP sign-in sessions: the key row each session acts through, the session with its token
 * hashes, rotation, revocation, the admin list, and the per-request access token lookup on the
 * read connection. Write statements run inside the services' transactions.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type JoinedOrganizationColumns, joinedOrganizationSelect } from "../repo.js"
import type { Role } from "../domain.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const apiKeysWrites = declareWrites("api_keys")
const mcpSessionsWrites = declareWrites("mcp_sessions")

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
export interface AccessRow extends SessionRow, JoinedOrganizationColumns {
  readonly client_name: string
  readonly m_email: string
  readonly m_role: Role
  readonly m_created_at: string
  readonly k_name: string
  readonly k_prefix: string
  readonly k_created_at: string
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

/** MCP sign-in sessions in SQL. */
export class McpSessionRepo extends Effect.Service<McpSessionRepo>()("svc/McpSessionRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const first = <A>(rows: ReadonlyArray<A>): A | null => rows[0] ?? null
    const changed = (rows: ReadonlyArray<unknown>) => rows.length === 1
    return {
      /** Records the key row a session acts through: personal, every scope its member's role allows, a secret nobody holds. */
      insertSessionKey: (row: { id: string; organization_id: string; member_id: string; name: string; secret_hash: string; created_at: string }) =>
        Effect.orDie(
          sql`INSERT INTO api_keys (id, organization_id, kind, member_id, name, prefix, secret_hash, scopes, created_at, sign_in)
            VALUES (${row.id}, ${row.organization_id}, 'personal', ${row.member_id}, ${row.name}, 'sign-in', ${row.secret_hash}, 'all', ${row.created_at}, 1)`.pipe(writing(apiKeysWrites))
        ),

      /** Records a session. */
      insertSession: (
        row: Omit<SessionRow, "revoked_at" | "member_removed_at"> & {
          readonly access_hash: string
          readonly refresh_hash: string
          readonly created_at: string
        }
      ) => Effect.orDie(sql`INSERT INTO mcp_sessions ${sql.insert({ ...row, last_used_at: null, revoked_at: null })}`.pipe(writing(mcpSessionsWrites))),

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
              WHERE id = ${id} AND refresh_hash = ${oldRefreshHash} AND revoked_at IS NULL RETURNING id`.pipe(writing(mcpSessionsWrites)),
            changed
          )
        ),

      /** Ends a session and its key row (idempotent). */
      revokeSession: (id: string, at: string) =>
        Effect.orDie(
          Effect.zipRight(
            sql`UPDATE mcp_sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`.pipe(writing(mcpSessionsWrites)),
            sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = (SELECT key_id FROM mcp_sessions WHERE id = ${id}) AND revoked_at IS NULL`.pipe(writing(apiKeysWrites))
          )
        ),

      /** Notes when a session was last used. */
      touch: (id: string, at: string) => Effect.orDie(sql`UPDATE mcp_sessions SET last_used_at = ${at} WHERE id = ${id}`.pipe(writing(mcpSessionsWrites))),

      /** One indexed lookup by access token hash (on the read connection): the session, its member, key, client and organization. */
      access: (accessHash: string) =>
        Effect.orDie(
          reader.all<AccessRow>(
            `SELECT ${sessionColumns}, c.name AS client_name, m.email AS m_email, m.role AS m_role, m.created_at AS m_created_at,
              k.name AS k_name, k.prefix AS k_prefix, k.created_at AS k_created_at,
              ${joinedOrganizationSelect}
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
