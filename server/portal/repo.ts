/**
 * SQL of Portal sign-in: codes, sessions and the conversations an end user holds at a Portal. What
 * sign-in needs of other families (the Portal, the end user and their first sign-in, refusal emails
 * sent, the published Apps shown, a conversation's messages, the Portal secret) is each owner's
 * repository step, run here through `statementsOn`. Write statements run inside the service's
 * transactions.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PublishedAppRef, publishedAppsTx } from "../builder/apps/repo.js"
import { signInSecretSetting } from "../identity/sign-in/codes.js"
import { settingMadeOnceTx } from "../platform/settings-repo.js"
import { statementsOn } from "../platform/sql/write-fast-path.js"
import { activatePendingAccountTx, markFirstSignInTx, type SignInAccount, signInAccountByEmailTx, signInAccountTx } from "../provisioning/end-users/tx-repo.js"
import { emailsSinceTx } from "../provisioning/outbox/repo.js"
import { portalByIdTx, type PortalRef } from "../provisioning/portals/repo.js"
import { historyTx } from "../runtime/runs/turn-repo.js"
import { declareWrites, writing } from "../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const portalCodesWrites = declareWrites("portal_codes")
const portalConversationsWrites = declareWrites("portal_conversations")
const portalSessionsWrites = declareWrites("portal_sessions")

/** A Portal row as sign-in needs it (the Portals repository's). */
export type PortalRow = PortalRef

/** An end user row as sign-in needs it (the end-users repository's). */
export type EndUserRow = SignInAccount

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

/** A published App as the Portal lists it (the builder's). */
export type PortalAppRow = PublishedAppRef

/** Portal sign-in in SQL. */
export class PortalSignInRepo extends Effect.Service<PortalSignInRepo>()("svc/PortalSignInRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = <A>(rows: ReadonlyArray<A>): A | null => rows[0] ?? null
    const statements = statementsOn(sql)
    return {
      /** The Portal, or null. */
      portal: (id: string): Effect.Effect<PortalRow | null> => statements(portalByIdTx(id)),

      /** The organization's end user with this normalised email, or null. */
      endUserByEmail: (organizationId: string, emailKey: string): Effect.Effect<EndUserRow | null> =>
        statements(signInAccountByEmailTx(organizationId, emailKey)),

      /** The end user, or null. */
      endUser: (id: string): Effect.Effect<EndUserRow | null> => statements(signInAccountTx(id)),

      /** Spends every unused code of the end user at the Portal (a new one replaces them). */
      spendCodes: (portalId: string, endUserId: string, at: string) =>
        Effect.orDie(sql`UPDATE portal_codes SET used_at = ${at} WHERE portal_id = ${portalId} AND end_user_id = ${endUserId} AND used_at IS NULL`.pipe(writing(portalCodesWrites))),

      /** How many codes the end user was sent at the Portal since `since` (ISO time). */
      codesSince: (portalId: string, endUserId: string, since: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ n: number }>`SELECT count(*) AS n FROM portal_codes WHERE portal_id = ${portalId} AND end_user_id = ${endUserId} AND created_at > ${since}`,
            (rows) => Number(rows[0]?.n ?? 0)
          )
        ),

      /** How many refusal emails went to `recipient` since `since` (ISO time). */
      refusalsSince: (recipient: string, since: string): Effect.Effect<number> => statements(emailsSinceTx(recipient, "sign_in_refused", since)),

      /** Records a new code. */
      insertCode: (row: CodeRow & { readonly organization_id: string; readonly portal_id: string; readonly created_at: string }) =>
        Effect.orDie(sql`INSERT INTO portal_codes ${sql.insert({ ...row })}`.pipe(writing(portalCodesWrites))),

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
      countTry: (codeId: string) => Effect.orDie(sql`UPDATE portal_codes SET tries = tries + 1 WHERE id = ${codeId}`.pipe(writing(portalCodesWrites))),

      /** Spends a code by its right answer; false when it was already spent. */
      useCode: (codeId: string, at: string) =>
        Effect.orDie(
          Effect.map(sql<{ id: string }>`UPDATE portal_codes SET used_at = ${at} WHERE id = ${codeId} AND used_at IS NULL RETURNING id`.pipe(writing(portalCodesWrites)), (rows) => rows.length === 1)
        ),

      /** Makes a pending identity active. */
      activate: (endUserId: string, at: string): Effect.Effect<void> => statements(activatePendingAccountTx(endUserId, at)),

      /** Marks the end user's first sign-in to the organization; true only the first time. */
      markFirstSignIn: (endUserId: string, at: string): Effect.Effect<boolean> => statements(markFirstSignInTx(endUserId, at)),

      /** Records a session. */
      insertSession: (row: {
        readonly id: string
        readonly token_hash: string
        readonly organization_id: string
        readonly portal_id: string
        readonly end_user_id: string
        readonly expires_at: number
        readonly created_at: string
      }) => Effect.orDie(sql`INSERT INTO portal_sessions ${sql.insert({ ...row, ended_at: null })}`.pipe(writing(portalSessionsWrites))),

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
        Effect.orDie(sql`UPDATE portal_sessions SET ended_at = ${at} WHERE id = ${sessionId} AND ended_at IS NULL`.pipe(writing(portalSessionsWrites))),

      /** Records that the end user holds a conversation at the Portal. */
      holdConversation: (conversationId: string, portalId: string, endUserId: string, at: string) =>
        Effect.orDie(
          sql`INSERT INTO portal_conversations (conversation_id, portal_id, end_user_id, created_at)
            VALUES (${conversationId}, ${portalId}, ${endUserId}, ${at}) ON CONFLICT (conversation_id) DO NOTHING`.pipe(writing(portalConversationsWrites))
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

      /** The ids of the conversations an end user holds at any Portal (`GET /conversations?endUserId`). */
      conversationsHeldBy: (endUserId: string): Effect.Effect<ReadonlyArray<string>> =>
        Effect.orDie(
          Effect.map(sql<{ conversation_id: string }>`SELECT conversation_id FROM portal_conversations WHERE end_user_id = ${endUserId}`, (rows) =>
            rows.map((row) => row.conversation_id)
          )
        ),

      /** Who holds each of these conversations at a Portal (those held by nobody are left out). */
      conversationHolders: (conversationIds: ReadonlyArray<string>) =>
        conversationIds.length === 0
          ? Effect.succeed([] as ReadonlyArray<{ conversation_id: string; portal_id: string; end_user_id: string }>)
          : Effect.orDie(
              sql<{ conversation_id: string; portal_id: string; end_user_id: string }>`SELECT conversation_id, portal_id, end_user_id
                FROM portal_conversations WHERE ${sql.in("conversation_id", conversationIds)}`
            ),

      /** The published Apps among `ids`, by name (their published name and description). */
      publishedApps: (organizationId: string, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<PortalAppRow>> =>
        statements(publishedAppsTx(organizationId, ids)),

      /** The messages of a conversation, oldest first (the runtime's conversation history). */
      messages: (conversationId: string): Effect.Effect<ReadonlyArray<{ role: "user" | "assistant"; text: string }>> =>
        Effect.map(statements(historyTx(conversationId)), (rows) => rows.map((row) => ({ role: row.role, text: row.text }))),

      /** The Portal secret, made once (the first writer wins). */
      secret: (fresh: string): Effect.Effect<string> => statements(settingMadeOnceTx(signInSecretSetting, fresh))
    }
  })
}) {}
