/**
 * The approval side of MCP sign-in, as the authorization page drives it: client registration, a
 * one-time code by email (the Portal's rules: 6 digits, 10 minutes, 5 tries, at most 5 codes per
 * 10 minutes, kept as an HMAC under the server's sign-in secret, sent through the outbox), then the
 * workspace the member connects and the authorization code for the client. An address that may not
 * sign in (no active membership, or none in the workspace of a slug address) is sent nothing, and
 * the page answers alike. A client named by its metadata document (a URL `client_id`) is resolved
 * by `client-documents.ts` and recorded when it is issued a code. Knows nothing of HTTP.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppClock, isoAt } from "../../platform/clock.js"
import { newId } from "../../platform/ids.js"
import { settingMadeOnceTx } from "../../platform/settings-repo.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import { emailKey as emailKeyOf } from "../../provisioning/end-users/domain.js"
import {
  codeTtlMs,
  keyedHash,
  maxCodesPerWindow,
  maxCodeTries,
  newCode,
  newPortalSecret,
  normalisedCode,
  sameDigest,
  signInSecretSetting
} from "../../identity/sign-in/codes.js"
import { Outbox } from "../../provisioning/outbox/service.js"
import type { McpAddress } from "../auth.js"
import {
  addressPath,
  type AuthorizationRequest,
  authorizationCodeTtlMs,
  newOpaqueCode,
  type OAuthClient,
  tokenHash,
  type Workspace
} from "../../identity/mcp-sign-in/domain.js"
import { McpSignInRepo } from "../../identity/mcp-sign-in/repo.js"
import { isClientIdUrl } from "../../identity/mcp-sign-in/client-metadata.js"
import { type ClientDocumentRefused, ClientDocuments, type DocumentClient } from "./client-documents.js"

/** The client an authorization request names: a registered one, or one described by its metadata document (`document` set). */
export interface AuthorizingClient {
  readonly client: OAuthClient
  readonly document: DocumentClient | null
}

/** A right code: the ticket that approves a workspace and the workspaces the member may choose from. */
export interface VerifiedSignIn {
  readonly ticket: string
  readonly workspaces: ReadonlyArray<Workspace>
}

const looksLikeEmail = (email: string) => /^[^\s@]+@[^\s@]+$/.test(email.trim()) && email.length <= 320

const slugOf = (address: McpAddress) => (address.kind === "workspace" ? address.slug : null)

/** Client registration, codes, workspace choice and authorization codes. */
export class McpApproval extends Effect.Service<McpApproval>()("svc/McpApproval", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* McpSignInRepo
    const documents = yield* ClientDocuments
    const outbox = yield* Outbox
    const clock = yield* AppClock
    const inTransaction = transactionsOn(sql)
    const statements = statementsOn(sql)
    let cachedSecret: string | null = null
    const secret = Effect.suspend(() =>
      cachedSecret !== null
        ? Effect.succeed(cachedSecret)
        : Effect.tap(statements(settingMadeOnceTx(signInSecretSetting, newPortalSecret())), (value) => Effect.sync(() => void (cachedSecret = value)))
    )

    return {
      /** Records a client registered by RFC 7591 (its metadata already checked) and answers it. */
      registerClient: (name: string, redirectUris: ReadonlyArray<string>, metadata: unknown) =>
        Effect.gen(function* () {
          const client: OAuthClient = { id: newId(), name, redirectUris }
          const at = clock.now()
          yield* repo.insertClient(client, JSON.stringify(metadata), isoAt(at))
          return { client, issuedAt: Math.floor(at / 1000) }
        }),

      /** A registered client (or one that was issued a code through its metadata document), or null. */
      client: (clientId: string) => repo.client(clientId),

      /**
       * The client an authorization request names: by its metadata document when the id is a URL
       * (fetched or kept, refused when it cannot be used), else the registered one or null.
       */
      authorizingClient: (clientId: string): Effect.Effect<AuthorizingClient | null, ClientDocumentRefused> =>
        isClientIdUrl(clientId)
          ? Effect.map(documents.resolve(clientId), (document) => ({ client: document.client, document }))
          : Effect.map(repo.client(clientId), (client) => (client === null ? null : { client, document: null })),

      /**
       * Asks for a code for `email` at the MCP address. Answers nothing either way: an address with
       * an active membership that may connect there gets a new code (older unused ones are spent;
       * at most 5 per 10 minutes), any other address nothing at all.
       */
      requestCode: (email: string, address: McpAddress, clientName: string): Effect.Effect<void> =>
        Effect.gen(function* () {
          if (!looksLikeEmail(email)) return
          const key = yield* secret
          const emailKey = emailKeyOf(email)
          yield* inTransaction(
            Effect.gen(function* () {
              const found = yield* repo.workspaces(emailKey, slugOf(address))
              if (found.workspaces.length === 0 || found.email === null) return
              const now = clock.now()
              if ((yield* repo.codesSince(emailKey, isoAt(now - codeTtlMs))) >= maxCodesPerWindow) return
              const code = newCode()
              yield* repo.spendCodes(emailKey, isoAt(now))
              yield* repo.insertCode({
                id: newId(),
                email_key: emailKey,
                resource: addressPath(address),
                code_hash: keyedHash(key, "code", code),
                tries: 0,
                expires_at: now + codeTtlMs,
                created_at: isoAt(now)
              })
              yield* outbox.enqueue({
                organizationId: address.kind === "workspace" ? found.workspaces[0]!.organizationId : null,
                kind: "sign_in_code",
                to: found.email,
                subject: "Your svc sign-in code",
                body: `Your code to connect ${clientName} to svc is ${code}.\n\nIt works for 10 minutes. If you did not ask for it, ignore this email: nothing is connected without it.\n`
              })
            })
          )
        }),

      /**
       * Checks a code; the right one is spent and answers a ticket with the workspaces the member
       * may connect at the address. Null otherwise (a wrong code counts a try; an unknown address,
       * a spent, expired or over-tried code, no membership left, all alike).
       */
      verifyCode: (email: string, typed: string, address: McpAddress): Effect.Effect<VerifiedSignIn | null> =>
        Effect.gen(function* () {
          const key = yield* secret
          const code = normalisedCode(typed)
          const emailKey = emailKeyOf(email)
          return yield* inTransaction(
            Effect.gen(function* () {
              const live = yield* repo.liveCode(emailKey, addressPath(address))
              const now = clock.now()
              if (live === null || live.expires_at <= now || live.tries >= maxCodeTries) return null
              if (code === null || !sameDigest(live.code_hash, keyedHash(key, "code", code))) {
                yield* repo.countTry(live.id)
                return null
              }
              const ticket = newOpaqueCode()
              if (!(yield* repo.useCode(live.id, tokenHash(ticket), isoAt(now)))) return null
              const { workspaces } = yield* repo.workspaces(emailKey, slugOf(address))
              return workspaces.length === 0 ? null : { ticket, workspaces }
            })
          )
        }),

      /**
       * Spends the ticket for the workspace of `memberId` and answers the authorization code for the
       * request; null when the ticket is unknown, spent or expired, was issued for another address,
       * or the membership is not one the member may connect there. A client described by its
       * metadata `document` is recorded (or brought up to date) with the code.
       */
      approve: (ticket: string, memberId: string, address: McpAddress, request: AuthorizationRequest, document: DocumentClient | null = null): Effect.Effect<string | null> =>
        inTransaction(
          Effect.gen(function* () {
            const now = clock.now()
            const spent = yield* repo.useTicket(tokenHash(ticket), now, isoAt(now))
            if (spent === null || spent.resource !== request.resource || spent.resource !== addressPath(address)) return null
            const { workspaces } = yield* repo.workspaces(spent.email_key, slugOf(address))
            const chosen = workspaces.find((workspace) => workspace.memberId === memberId)
            if (chosen === undefined) return null
            const code = newOpaqueCode()
            if (document !== null) yield* repo.upsertDocumentClient(document.client, JSON.stringify(document.metadata), isoAt(now))
            yield* repo.insertAuthorizationCode({
              id: newId(),
              code_hash: tokenHash(code),
              client_id: request.clientId,
              redirect_uri: request.redirectUri,
              code_challenge: request.codeChallenge,
              resource: request.resource,
              scope: request.scope,
              organization_id: chosen.organizationId,
              member_id: chosen.memberId,
              expires_at: now + authorizationCodeTtlMs,
              created_at: isoAt(now)
            })
            return code
          })
        )
    }
  }),
  dependencies: [McpSignInRepo.Default, Outbox.Default, ClientDocuments.Default]
}) {}
