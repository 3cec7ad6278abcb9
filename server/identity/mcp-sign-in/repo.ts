/**
 * SQL of MCP sign-in's approval: registered clients, memberships by email, one-time email codes and
 * workspace-choice tickets, authorization codes. Write statements run inside the services'
 * transactions. Sessions are in `session-repo.ts`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { OAuthClient, Workspace } from "./domain.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const mcpAuthorizationCodesWrites = declareWrites("mcp_authorization_codes")
const mcpOauthClientsWrites = declareWrites("mcp_oauth_clients")
const mcpSignInCodesWrites = declareWrites("mcp_sign_in_codes")

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

/** MCP sign-in in SQL. */
export class McpSignInRepo extends Effect.Service<McpSignInRepo>()("svc/McpSignInRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = <A>(rows: ReadonlyArray<A>): A | null => rows[0] ?? null
    const changed = (rows: ReadonlyArray<unknown>) => rows.length === 1
    return {
      /** Records a registered client. */
      insertClient: (client: OAuthClient, metadata: string, at: string) =>
        Effect.orDie(
          sql`INSERT INTO mcp_oauth_clients (id, name, redirect_uris, metadata, created_at)
            VALUES (${client.id}, ${client.name}, ${JSON.stringify(client.redirectUris)}, ${metadata}, ${at})`.pipe(writing(mcpOauthClientsWrites))
        ),

      /**
       * Records a client described by its metadata document (its id the document's URL), or brings
       * its row up to date: sessions and codes name it, and the sessions list shows its name.
       */
      upsertDocumentClient: (client: OAuthClient, metadata: string, at: string) =>
        Effect.orDie(
          sql`INSERT INTO mcp_oauth_clients (id, name, redirect_uris, metadata, created_at)
            VALUES (${client.id}, ${client.name}, ${JSON.stringify(client.redirectUris)}, ${metadata}, ${at})
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris, metadata = excluded.metadata`.pipe(writing(mcpOauthClientsWrites))
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
        Effect.orDie(sql`UPDATE mcp_sign_in_codes SET used_at = ${at} WHERE email_key = ${emailKey} AND used_at IS NULL`.pipe(writing(mcpSignInCodesWrites))),

      /** Records a new code. */
      insertCode: (row: SignInCodeRow & { readonly created_at: string }) =>
        Effect.orDie(sql`INSERT INTO mcp_sign_in_codes ${sql.insert({ ...row, used_at: null, choice_hash: null, chosen_at: null })}`.pipe(writing(mcpSignInCodesWrites))),

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
      countTry: (id: string) => Effect.orDie(sql`UPDATE mcp_sign_in_codes SET tries = tries + 1 WHERE id = ${id}`.pipe(writing(mcpSignInCodesWrites))),

      /** Spends a code by its right answer and keeps the hash of the workspace-choice ticket; false when it was already spent. */
      useCode: (id: string, choiceHash: string, at: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ id: string }>`UPDATE mcp_sign_in_codes SET used_at = ${at}, choice_hash = ${choiceHash}
              WHERE id = ${id} AND used_at IS NULL RETURNING id`.pipe(writing(mcpSignInCodesWrites)),
            changed
          )
        ),

      /** Spends a workspace-choice ticket that is still valid; answers its address and email, or null. */
      useTicket: (choiceHash: string, now: number, at: string) =>
        Effect.orDie(
          Effect.map(
            sql<{ email_key: string; resource: string }>`UPDATE mcp_sign_in_codes SET chosen_at = ${at}
              WHERE choice_hash = ${choiceHash} AND chosen_at IS NULL AND expires_at > ${now} RETURNING email_key, resource`.pipe(writing(mcpSignInCodesWrites)),
            first
          )
        ),

      /** Records an authorization code. */
      insertAuthorizationCode: (row: Omit<AuthorizationCodeRow, "used_at" | "session_id"> & { readonly code_hash: string; readonly created_at: string }) =>
        Effect.orDie(sql`INSERT INTO mcp_authorization_codes ${sql.insert({ ...row, used_at: null, session_id: null })}`.pipe(writing(mcpAuthorizationCodesWrites))),

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
              WHERE id = ${id} AND used_at IS NULL RETURNING id`.pipe(writing(mcpAuthorizationCodesWrites)),
            changed
          )
        ),

      /** Whether the member is still in the organization. */
      memberActive: (memberId: string) =>
        Effect.orDie(
          Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM members WHERE id = ${memberId} AND removed_at IS NULL`, (rows) => Number(rows[0]?.n ?? 0) > 0)
        )
    }
  })
}) {}
