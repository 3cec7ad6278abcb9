/**
 * Sign-in at a Portal: a one-time code by email, then a session. Who may sign in follows
 * provisioning: an `active` or `pending` end user of the Portal's organization gets a code (kept
 * hashed, 10 minutes, 5 tries, recorded in the outbox); a `revoked` one gets an email saying access
 * was revoked and no code; `deleted` and unknown addresses get nothing. The caller answers the same
 * neutral page in every case. The right code, in one transaction, spends it, makes a pending
 * identity active, records the first sign-in to the organization (then `end_user.signup` for this
 * Portal) and opens a session; the webhook worker is woken after commit. A session works only while
 * its end user is `active`. Knows nothing of HTTP.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppClock, isoAt } from "../platform/clock.js"
import { newId } from "../platform/ids.js"
import { transactionsOn } from "../platform/sql/database.js"
import { emailKey } from "../provisioning/end-users/domain.js"
import { Outbox } from "../provisioning/outbox/service.js"
import { WebhookService } from "../webhooks/service.js"
import { codeTtlMs, keyedHash, maxCodesPerWindow, maxCodeTries, refusalWindowMs, newCode, newPortalSecret, newSessionToken, normalisedCode, sameDigest } from "../identity/sign-in/codes.js"
import { type EndUserRow, type PortalRow, PortalSignInRepo } from "./repo.js"
import { sessionTtlMs } from "../identity/sign-in/cookies.js"

/** A signed-in end user at a Portal. */
export interface SignedIn {
  readonly sessionId: string
  readonly portal: PortalRow
  readonly endUser: { readonly id: string; readonly email: string; readonly fullName: string | null }
}

/** A session just opened: the token for the cookie and when it expires (ms since the epoch). */
export interface OpenedSession {
  readonly token: string
  readonly expiresAt: number
}

/** The normalised form of an email address (as `end_users.email_key`): the end users' own rule, `emailKey`. */
export const emailKeyOf: (email: string) => string = emailKey

const looksLikeEmail = (email: string) => /^[^\s@]+@[^\s@]+$/.test(email.trim()) && email.length <= 320

/** Portal sign-in: codes, sessions, sign-out. */
export class PortalSignIn extends Effect.Service<PortalSignIn>()("svc/PortalSignIn", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PortalSignInRepo
    const outbox = yield* Outbox
    const webhooks = yield* WebhookService
    const clock = yield* AppClock
    const inTransaction = transactionsOn(sql)
    let cachedSecret: string | null = null
    const secret = Effect.suspend(() =>
      cachedSecret !== null ? Effect.succeed(cachedSecret) : Effect.tap(repo.secret(newPortalSecret()), (value) => Effect.sync(() => void (cachedSecret = value)))
    )

    /** The code email, or for a revoked identity the email saying why no code came. */
    const codeEmail = (portal: PortalRow, user: EndUserRow, code: string) => ({
      organizationId: portal.organization_id,
      kind: "sign_in_code" as const,
      to: user.email,
      subject: `Your sign-in code for ${portal.name}`,
      body: `Your sign-in code for ${portal.name} is ${code}.\n\nIt works for 10 minutes. If you did not ask for it, ignore this email.\n`
    })
    const refusedEmail = (portal: PortalRow, user: EndUserRow) => ({
      organizationId: portal.organization_id,
      kind: "sign_in_refused" as const,
      to: user.email,
      subject: `You cannot sign in to ${portal.name}`,
      body: `Someone asked to sign in to ${portal.name} with this address. Your access there was revoked, so no code was sent.\n\nIf you think this is a mistake, contact the organization that gave you access.\n`
    })

    return {
      /** The Portal, or null. */
      portal: (portalId: string) => repo.portal(portalId),

      /**
       * Asks for a code. Answers nothing either way, so the caller's page cannot tell who exists:
       * an `active` or `pending` identity gets a new code (older unused ones are spent; at most 5
       * per 10 minutes), a `revoked` one the refusal email (at most one an hour), a `deleted` or
       * unknown address nothing at all.
       */
      requestCode: (portal: PortalRow, email: string): Effect.Effect<void> =>
        Effect.gen(function* () {
          if (!looksLikeEmail(email)) return
          const key = yield* secret
          const user = yield* repo.endUserByEmail(portal.organization_id, emailKeyOf(email))
          if (user === null || user.state === "deleted") return
          yield* inTransaction(
            Effect.gen(function* () {
              const now = clock.now()
              if (user.state === "revoked") {
                if ((yield* repo.refusalsSince(user.email, isoAt(now - refusalWindowMs))) === 0) yield* outbox.enqueue(refusedEmail(portal, user))
                return
              }
              if ((yield* repo.codesSince(portal.id, user.id, isoAt(now - codeTtlMs))) >= maxCodesPerWindow) return
              const code = newCode()
              yield* repo.spendCodes(portal.id, user.id, isoAt(now))
              yield* repo.insertCode({
                id: newId(),
                organization_id: portal.organization_id,
                portal_id: portal.id,
                end_user_id: user.id,
                code_hash: keyedHash(key, "code", code),
                tries: 0,
                expires_at: now + codeTtlMs,
                used_at: null,
                created_at: isoAt(now)
              })
              yield* outbox.enqueue(codeEmail(portal, user, code))
            })
          )
        }),

      /**
       * Checks a code; on the right one opens a session (see the module comment), else answers null
       * (a wrong code counts a try; an unknown address, a spent, expired or over-tried code, or an
       * identity no longer allowed, all alike).
       */
      verifyCode: (portal: PortalRow, email: string, typed: string): Effect.Effect<OpenedSession | null> =>
        Effect.gen(function* () {
          const key = yield* secret
          const code = normalisedCode(typed)
          const opened = yield* inTransaction(
            Effect.gen(function* () {
              const user = yield* repo.endUserByEmail(portal.organization_id, emailKeyOf(email))
              if (user === null || (user.state !== "active" && user.state !== "pending")) return null
              const live = yield* repo.liveCode(portal.id, user.id)
              const now = clock.now()
              if (live === null || live.expires_at <= now || live.tries >= maxCodeTries) return null
              if (code === null || !sameDigest(live.code_hash, keyedHash(key, "code", code))) {
                yield* repo.countTry(live.id)
                return null
              }
              const at = isoAt(now)
              if (!(yield* repo.useCode(live.id, at))) return null
              if (user.state === "pending") yield* repo.activate(user.id, at)
              const first = yield* repo.markFirstSignIn(user.id, at)
              const signup = first
                ? yield* webhooks.enqueueSignup({
                    organizationId: portal.organization_id,
                    portal: { id: portal.id, name: portal.name },
                    endUser: { id: user.id, email: user.email, createdAt: user.created_at, fullName: user.full_name }
                  })
                : false
              const token = newSessionToken()
              const expiresAt = now + sessionTtlMs
              yield* repo.insertSession({
                id: newId(),
                token_hash: keyedHash(key, "session", token),
                organization_id: portal.organization_id,
                portal_id: portal.id,
                end_user_id: user.id,
                expires_at: expiresAt,
                created_at: at
              })
              return { token, expiresAt, signup }
            })
          )
          if (opened === null) return null
          if (opened.signup) yield* webhooks.wake
          return { token: opened.token, expiresAt: opened.expiresAt }
        }),

      /** Who the session token signs in at the Portal: null when missing, unknown, ended, expired, or its end user is no longer active. */
      session: (portal: PortalRow, token: string | undefined): Effect.Effect<SignedIn | null> =>
        Effect.gen(function* () {
          if (token === undefined || token.length === 0 || token.length > 100) return null
          const row = yield* repo.session(portal.id, keyedHash(yield* secret, "session", token))
          if (row === null || row.expires_at <= clock.now() || row.state !== "active") return null
          return { sessionId: row.id, portal, endUser: { id: row.end_user_id, email: row.email, fullName: row.full_name } }
        }),

      /** Ends a session (sign-out). */
      signOut: (signedIn: SignedIn): Effect.Effect<void> => repo.endSession(signedIn.sessionId, isoAt(clock.now())).pipe(Effect.asVoid)
    }
  }),
  dependencies: [PortalSignInRepo.Default, Outbox.Default, WebhookService.Default]
}) {}
