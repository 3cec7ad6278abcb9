/**
 * The signup webhook: a Portal's endpoint (URL, the Enabled switch, the signing secret made on the
 * first enable and shown once), the durable outbox of deliveries, test events and redelivery.
 * `enqueueSignup` is called inside the transaction of a first sign-in, so the event exists exactly
 * when the sign-in was committed; the worker (`worker.ts`) delivers. Knows nothing of HTTP.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Queue } from "effect"
import { AppClock, isoAt } from "../platform/clock.js"
import { InvalidRequest, NotFound } from "../platform/errors.js"
import { newId } from "../platform/ids.js"
import { checkUrl, isPublicOrLoopback } from "../platform/net/address-policy.js"
import { statementsOn } from "../platform/sql/write-fast-path.js"
import { portalByIdTx } from "../provisioning/portals/repo.js"
import { type AttemptOutcome, sendSigned } from "./delivery.js"
import { type Delivery, deliveryConcurrency, maxAttempts, type PortalWebhook, signupEvent, type SignupPayload, WebhookSettings } from "./domain.js"
import { type AttemptRow, type DeliveryRow, type ListenCursor, type PortalWebhookRow, WebhookRepo } from "./repo.js"
import { newSigningSecret } from "./signing.js"

/** Wakes the delivery worker when a delivery is enqueued in this process. */
export class WebhookSignal extends Effect.Service<WebhookSignal>()("svc/WebhookSignal", {
  effect: Effect.map(Queue.sliding<void>(1), (queue) => ({
    /** Asks the worker to look for due deliveries now. */
    wake: Queue.offer(queue, undefined).pipe(Effect.asVoid),
    /** Waits for a wake-up. */
    woken: Queue.take(queue)
  }))
}) {}

const toWebhook = (row: PortalWebhookRow): PortalWebhook => ({
  portalId: row.portal_id,
  url: row.url,
  enabled: row.enabled === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const toDelivery = (row: DeliveryRow, attempts: ReadonlyArray<AttemptRow>): Delivery => ({
  id: row.id,
  portalId: row.portal_id,
  event: row.event,
  test: row.test === 1,
  endUserId: row.end_user_id,
  url: row.url,
  status: row.status,
  attempts: attempts
    .filter((attempt) => attempt.delivery_id === row.id)
    .map((attempt) => ({
      attempt: attempt.attempt,
      manual: attempt.manual === 1,
      startedAt: attempt.started_at,
      durationMs: attempt.duration_ms,
      statusCode: attempt.status_code,
      error: attempt.error
    })),
  nextAttemptAt: row.status === "pending" ? isoAt(row.next_attempt_at) : null,
  createdAt: row.created_at,
  finishedAt: row.finished_at
})

/**
 * A delivery's state after an attempt: delivered on success; an automatic attempt that failed is
 * retried until the fourth (or until the endpoint is disabled or gone); a manual attempt that
 * failed leaves a delivery as it was, except a test event, which is never retried.
 */
const nextStatus = (
  row: DeliveryRow,
  delivered: boolean,
  automaticAttempts: number,
  manual: boolean,
  endpointEnabled: boolean
): DeliveryRow["status"] => {
  if (delivered) return "delivered"
  if (row.test === 1) return "failed"
  if (manual) return row.status
  return automaticAttempts >= maxAttempts || !endpointEnabled ? "failed" : "pending"
}

/** The Portal a webhook belongs to. */
interface PortalRef {
  readonly id: string
  readonly name: string
}

/** Portal endpoints, the outbox, tests and redelivery. */
export class WebhookService extends Effect.Service<WebhookService>()("svc/WebhookService", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* WebhookRepo
    const clock = yield* AppClock
    const settings = yield* WebhookSettings
    const signal = yield* WebhookSignal

    const portalOf = (organizationId: string, portalId: string) =>
      Effect.flatMap(statementsOn(sql)(portalByIdTx(portalId)), (row) =>
        row === null || row.organization_id !== organizationId
          ? Effect.fail(new NotFound({ message: `No Portal '${portalId}' in this organization.` }))
          : Effect.succeed<PortalRef>({ id: row.id, name: row.name })
      )

    const deliveryOf = (organizationId: string, deliveryId: string) =>
      Effect.flatMap(repo.delivery(deliveryId), (row) =>
        row === null || row.organization_id !== organizationId
          ? Effect.fail(new NotFound({ message: `No webhook delivery '${deliveryId}' in this organization.` }))
          : Effect.succeed(row)
      )

    const withAttempts = (rows: ReadonlyArray<DeliveryRow>) =>
      Effect.map(repo.attempts(rows.map((row) => row.id)), (attempts) => rows.map((row) => toDelivery(row, attempts)))

    /** Sends one attempt of `row` and records it; `manual` attempts (redelivery, tests) are not retried. */
    const attempt = (row: DeliveryRow, options: { readonly manual: boolean }) =>
      Effect.gen(function* () {
        const endpoint = yield* repo.endpoint(row.portal_id)
        const number = (yield* repo.attemptCount(row.id)) + 1
        const startedAt = isoAt(clock.now())
        const outcome: AttemptOutcome =
          endpoint === null || endpoint.secret === null
            ? { delivered: false, statusCode: null, error: "The Portal has no webhook endpoint any more.", durationMs: 0 }
            : !options.manual && endpoint.enabled !== 1
              ? { delivered: false, statusCode: null, error: "The webhook was disabled; redeliver it once enabled.", durationMs: 0 }
              : yield* sendSigned({
                  url: endpoint.url,
                  secret: endpoint.secret,
                  body: row.body,
                  test: row.test === 1,
                  allowPrivate: settings.allowPrivateUrls,
                  timeoutMs: settings.attemptTimeoutMs
                })
        const automatic = options.manual ? row.attempts : row.attempts + 1
        const status = nextStatus(row, outcome.delivered, automatic, options.manual, endpoint?.enabled === 1)
        const delay = settings.retryDelaysSeconds[Math.min(automatic, maxAttempts - 1) - 1] ?? 0
        const now = clock.now()
        yield* repo.recordAttempt(
          {
            delivery_id: row.id,
            attempt: number,
            manual: options.manual ? 1 : 0,
            started_at: startedAt,
            duration_ms: outcome.durationMs,
            status_code: outcome.statusCode,
            error: outcome.error
          },
          {
            status,
            attempts: automatic,
            nextAttemptAt: status === "pending" && !options.manual ? now + delay * 1000 : row.next_attempt_at,
            finishedAt: status === "pending" ? null : isoAt(now)
          }
        )
        return outcome
      })

    return {
      /** A Portal's endpoint, or null when none was set. */
      endpoint: (organizationId: string, portalId: string) =>
        Effect.flatMap(portalOf(organizationId, portalId), () => Effect.map(repo.endpoint(portalId), (row) => (row === null ? null : toWebhook(row)))),

      /**
       * Sets a Portal's endpoint URL and switch. The URL must be http(s), public or this machine's
       * loopback (other private addresses with `--allow-private-urls`). The first enable makes the
       * signing secret and answers it (shown once); later answers carry `secret: null`.
       */
      configure: (organizationId: string, portalId: string, change: { readonly url?: string; readonly enabled?: boolean }) =>
        Effect.gen(function* () {
          yield* portalOf(organizationId, portalId)
          const current = yield* repo.endpoint(portalId)
          const url = change.url ?? current?.url
          if (url === undefined) return yield* new InvalidRequest({ message: "url: the Portal has no webhook endpoint yet; give its URL." })
          const check = checkUrl(url, settings.allowPrivateUrls, isPublicOrLoopback, true)
          if (!check.ok) return yield* new InvalidRequest({ message: `url: ${check.message}` })
          const enabled = change.enabled ?? current?.enabled === 1
          const secret = current?.secret ?? (enabled ? newSigningSecret() : null)
          const at = isoAt(clock.now())
          yield* repo.saveEndpoint({
            portal_id: portalId,
            organization_id: organizationId,
            url: check.url.href,
            secret,
            enabled: enabled ? 1 : 0,
            created_at: current?.created_at ?? at,
            updated_at: at
          })
          const saved = (yield* repo.endpoint(portalId))!
          return { webhook: toWebhook(saved), secret: secret !== null && current?.secret == null ? secret : null }
        }),

      /**
       * Records the `end_user.signup` event of a first sign-in at `portal`, inside the caller's
       * transaction, when the Portal's webhook is enabled; once per end user (a second call for the
       * same person records nothing). Answers whether it was recorded; wake the worker after commit.
       */
      enqueueSignup: (input: {
        readonly organizationId: string
        readonly portal: PortalRef
        readonly endUser: SignupPayload["endUser"]
      }) =>
        Effect.gen(function* () {
          const endpoint = yield* repo.endpoint(input.portal.id)
          if (endpoint === null || endpoint.enabled !== 1 || endpoint.secret === null) return false
          const now = clock.now()
          const payload: SignupPayload = {
            event: signupEvent,
            toolsetId: input.portal.id,
            toolsetName: input.portal.name,
            organizationId: input.organizationId,
            endUser: input.endUser,
            timestamp: isoAt(now)
          }
          return yield* repo.insertDelivery({
            id: newId(),
            organizationId: input.organizationId,
            portalId: input.portal.id,
            event: signupEvent,
            test: false,
            endUserId: input.endUser.id,
            url: endpoint.url,
            body: JSON.stringify(payload),
            nextAttemptAt: now,
            createdAt: isoAt(now)
          })
        }),

      /** Wakes the worker (after the transaction that enqueued committed). */
      wake: signal.wake,

      /**
       * Sends a clearly marked test event to the Portal's endpoint now (payload `test: true`, header
       * `X-Service-Test: true`, a sample end user): one attempt, recorded as a delivery, not retried.
       */
      sendTest: (organizationId: string, portalId: string) =>
        Effect.gen(function* () {
          const portal = yield* portalOf(organizationId, portalId)
          const endpoint = yield* repo.endpoint(portalId)
          if (endpoint === null || endpoint.secret === null) {
            return yield* new InvalidRequest({ message: "The Portal's webhook was never enabled: enable it with svc portals webhook --enable first." })
          }
          const now = clock.now()
          const payload: SignupPayload = {
            event: signupEvent,
            toolsetId: portal.id,
            toolsetName: portal.name,
            organizationId,
            endUser: { id: "00000000-0000-4000-8000-000000000000", email: "test.user@example.com", createdAt: isoAt(now), fullName: null },
            timestamp: isoAt(now),
            test: true
          }
          const id = newId()
          yield* repo.insertDelivery({
            id,
            organizationId,
            portalId,
            event: signupEvent,
            test: true,
            endUserId: null,
            url: endpoint.url,
            body: JSON.stringify(payload),
            // Not due while this attempt runs (as a claim would hold it), so a server's worker polling the
            // same outbox never sends it a second time; a test event is never retried after it.
            nextAttemptAt: now + settings.attemptTimeoutMs + 30_000,
            createdAt: isoAt(now)
          })
          yield* attempt((yield* repo.delivery(id))!, { manual: true })
          return (yield* withAttempts([(yield* repo.delivery(id))!]))[0]!
        }),

      /** A Portal's deliveries with their attempts, newest first (at most `limit`, default 50). */
      deliveries: (organizationId: string, portalId: string, limit = 50) =>
        Effect.flatMap(portalOf(organizationId, portalId), () => Effect.flatMap(repo.deliveries(portalId, limit), withAttempts)),

      /** Sends a delivery again now, whatever its state (one manual attempt); answers it with its attempts. */
      redeliver: (organizationId: string, deliveryId: string) =>
        Effect.gen(function* () {
          const row = yield* deliveryOf(organizationId, deliveryId)
          yield* attempt(row, { manual: true })
          return (yield* withAttempts([(yield* repo.delivery(deliveryId))!]))[0]!
        }),

      /**
       * One pass of the worker: claims each due delivery (a lease of the attempt's time limit and a
       * margin, so one cut off by a crash is tried again) and makes its next attempt, up to
       * `deliveryConcurrency` at once (a slow endpoint does not hold up the others). Answers how
       * many attempts were made.
       */
      deliverDue: Effect.gen(function* () {
        const made = yield* Effect.forEach(
          yield* repo.due(clock.now(), 20),
          (id) =>
            Effect.gen(function* () {
              const now = clock.now()
              if (!(yield* repo.claim(id, now, now + settings.attemptTimeoutMs + 30_000))) return 0
              const row = yield* repo.delivery(id)
              if (row === null) return 0
              yield* attempt(row, { manual: false })
              return 1
            }),
          { concurrency: deliveryConcurrency }
        )
        return made.reduce<number>((sum, n) => sum + n, 0)
      }),

      /** Where `svc listen` starts: after the newest delivery (of the organization, or of all). */
      listenStart: (organizationId: string | null) => repo.newest(organizationId),

      /**
       * Events recorded after `cursor` (`svc listen`), oldest first, each with its body and the
       * Portal's signing secret (so a forwarded copy verifies as the real one does).
       */
      eventsAfter: (cursor: ListenCursor | null, organizationId: string | null) =>
        Effect.map(repo.after(cursor, organizationId, 100), (rows) =>
          rows.map((row) => ({
            cursor: { createdAt: row.created_at, id: row.id } satisfies ListenCursor,
            deliveryId: row.id,
            portalId: row.portal_id,
            event: row.event,
            test: row.test === 1,
            body: row.body,
            secret: row.secret
          }))
        ),

      /** Milliseconds until the next pending delivery is due (null when none is pending). */
      untilNextDue: Effect.map(repo.nextDue, (at) => (at === null ? null : Math.max(0, at - clock.now())))
    }
  }),
  dependencies: [WebhookRepo.Default, WebhookSignal.Default]
}) {}
