/**
 * SQL of Portal sign-in: the Portal and end user looked up, codes, sessions, first sign-ins, the
 * conversations an end user holds at a Portal, and the published Apps shown. Write statements run
 * inside the service's transactions.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A Portal row as sign-in needs it. */
export interface PortalRow {
  readonly id: string
  readonly organization_id: string
  readonly name: string
}

/** An end user row as sign-in needs it. */
export interface EndUserRow {
  readonly id: string
  readonly organization_id: string
  readonly email: string
  readonly full_name: string | null
  readonly state: "active" | "pending" | "revoked" | "deleted"
  readonly created_at: string
}

/** A code row. */
export interface CodeRow {
  readonly id: string
  readonly end_user_id: string
  readonly code_hash: string
  readonly tries: number
  readonly expires_at: number
  readonly used_at: string | null
}

/** A live session with its end user. */
export interface SessionRow {
  readonly id: string
  readonly portal_id: string
  readonly end_user_id: string
  readonly expires_at: number
  readonly state: EndUserRow["state"]
  readonly email: string
  readonly full_name: string | null
}

/** A published App as the Portal lists it. */
export interface PortalAppRow {
  readonly id: string
  readonly name: string
  readonly description: string
}

/** Portal sign-in in SQL. */
export class PortalSignInRepo extends Effect.Service<PortalSignInRepo>()("svc/PortalSignInRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = <A>(rows: ReadonlyArray<A>): A | null => rows[0] ?? null
    return {
      /** The Portal, or null. */
      portal: (id: string) => Effect.orDie(Effect.map(sql<PortalRow>`SELECT id, organization_id, name FROM portals WHERE id = ${id}`, first)),

      /** The organization's end user with this normalised email, or null. */
      endUserByEmail: (organizationId: string, emailKey: string) =>
        Effect.orDie(
          Effect.map(
            sql<EndUserRow>`SELECT id, organization_id, email, full_name, state, created_at FROM end_users
              WHERE organization_id = ${organizationId} AND email_key = ${emailKey}`,
            first
          )
        ),

      /** The end user, or null. */
      endUser: (id: string) =>
        Effect.orDie(
          Effect.map(sql<EndUserRow>`SELECT id, organization_id, email, full_name, state, created_at FROM end_users WHERE id = ${id}`, first)
        ),

      /** Spends every unused code of the end user at the Portal (a new one replaces them). */
      spendCodes: (portalId: string, endUserId: string, at: string) =>
        Effect.orDie(sql`UPDATE portal_codes SET used_at = ${at} WHERE portal_id = ${portalId} AND end_user_id = ${endUserId} AND used_at IS NULL`),

      /** How many codes the end user was sent at the Portal since `since` (ISO time). */
      codesSince: (portalId: string, endUserId: string, since: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ n: number }>`SELECT count(*) AS n FROM portal_codes WHERE portal_id = ${portalId} AND end_user_id = ${endUserId} AND created_at > ${since}`,
            (rows) => Number(rows[0]?.n ?? 0)
          )
        ),

      /** How many refusal emails went to `recipient` since `since` (ISO time). */
      refusalsSince: (recipient: string, since: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ n: number }>`SELECT count(*) AS n FROM outbox_emails WHERE recipient = ${recipient} AND kind = 'sign_in_refused' AND created_at > ${since}`,
            (rows) => Number(rows[0]?.n ?? 0)
          )
        ),

      /** Records a new code. */
      insertCode: (row: CodeRow & { readonly organization_id: string; readonly portal_id: string; readonly created_at: string }) =>
        Effect.orDie(sql`INSERT INTO portal_codes ${sql.insert({ ...row })}`),

      /** The newest unused code of the end user at the Portal, or null. */
      liveCode: (portalId: string, endUserId: string) =>
        Effect.orDie(
          Effect.map(
            sql<CodeRow>`SELECT id, end_user_id, code_hash, tries, expires_at, used_at FROM portal_codes
              WHERE portal_id = ${portalId} AND end_user_id = ${endUserId} AND used_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1`,
            first
          )
        ),

      /** Counts one wrong answer against a code. */
      countTry: (codeId: string) => Effect.orDie(sql`UPDATE portal_codes SET tries = tries + 1 WHERE id = ${codeId}`),

      /** Spends a code by its right answer; false when it was already spent. */
      useCode: (codeId: string, at: string) =>
        Effect.orDie(
          Effect.map(sql<{ id: string }>`UPDATE portal_codes SET used_at = ${at} WHERE id = ${codeId} AND used_at IS NULL RETURNING id`, (rows) => rows.length === 1)
        ),

      /** Makes a pending identity active. */
      activate: (endUserId: string, at: string) =>
        Effect.orDie(sql`UPDATE end_users SET state = 'active', updated_at = ${at} WHERE id = ${endUserId} AND state = 'pending'`),

      /** Marks the end user's first sign-in to the organization; true only the first time. */
      markFirstSignIn: (endUserId: string, at: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ id: string }>`UPDATE end_users SET first_signed_in_at = ${at} WHERE id = ${endUserId} AND first_signed_in_at IS NULL RETURNING id`,
            (rows) => rows.length === 1
          )
        ),

      /** Records a session. */
      insertSession: (row: {
        readonly id: string
        readonly token_hash: string
        readonly organization_id: string
        readonly portal_id: string
        readonly end_user_id: string
        readonly expires_at: number
        readonly created_at: string
      }) => Effect.orDie(sql`INSERT INTO portal_sessions ${sql.insert({ ...row, ended_at: null })}`),

      /** The session with this token hash at the Portal, not ended, with its end user; null otherwise. */
      session: (portalId: string, tokenHash: string) =>
        Effect.orDie(
          Effect.map(
            sql<SessionRow>`SELECT s.id, s.portal_id, s.end_user_id, s.expires_at, u.state, u.email, u.full_name
              FROM portal_sessions s JOIN end_users u ON u.id = s.end_user_id
              WHERE s.token_hash = ${tokenHash} AND s.portal_id = ${portalId} AND s.ended_at IS NULL`,
            first
          )
        ),

      /** Ends a session. */
      endSession: (sessionId: string, at: string) =>
        Effect.orDie(sql`UPDATE portal_sessions SET ended_at = ${at} WHERE id = ${sessionId} AND ended_at IS NULL`),

      /** Records that the end user holds a conversation at the Portal. */
      holdConversation: (conversationId: string, portalId: string, endUserId: string, at: string) =>
        Effect.orDie(
          sql`INSERT INTO portal_conversations (conversation_id, portal_id, end_user_id, created_at)
            VALUES (${conversationId}, ${portalId}, ${endUserId}, ${at}) ON CONFLICT (conversation_id) DO NOTHING`
        ),

      /** Whether the end user holds the conversation at the Portal. */
      holds: (conversationId: string, portalId: string, endUserId: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ n: number }>`SELECT count(*) AS n FROM portal_conversations
              WHERE conversation_id = ${conversationId} AND portal_id = ${portalId} AND end_user_id = ${endUserId}`,
            (rows) => Number(rows[0]?.n ?? 0) > 0
          )
        ),

      /** The published Apps among `ids`, by name (their published name and description). */
      publishedApps: (organizationId: string, ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.succeed([] as ReadonlyArray<PortalAppRow>)
          : Effect.orDie(
              sql<PortalAppRow>`SELECT a.id, v.name, v.description FROM apps a
                JOIN app_versions v ON v.app_id = a.id AND v.version = a.published_version
                WHERE a.organization_id = ${organizationId} AND ${sql.in("a.id", ids)} ORDER BY v.name, a.id`
            ),

      /** The messages of a conversation, oldest first. */
      messages: (conversationId: string) =>
        Effect.orDie(
          sql<{ role: "user" | "assistant"; text: string }>`SELECT role, text FROM messages WHERE conversation_id = ${conversationId} ORDER BY sequence`
        ),

      /** The Portal secret, made once (the first writer wins). */
      secret: (fresh: string) =>
        Effect.orDie(
          Effect.zipRight(
            sql`INSERT INTO settings (name, value) VALUES ('portal_sign_in_secret', ${fresh}) ON CONFLICT (name) DO NOTHING`,
            Effect.map(sql<{ value: string }>`SELECT value FROM settings WHERE name = 'portal_sign_in_secret'`, (rows) => rows[0]!.value)
          )
        )
    }
  })
}) {}
