/** SQL of the signup webhook: Portal endpoints, the delivery outbox and its attempts. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { declareWrites, writing } from "../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const portalWebhooksWrites = declareWrites("portal_webhooks")
const webhookAttemptsWrites = declareWrites("webhook_attempts")
const webhookDeliveriesWrites = declareWrites("webhook_deliveries")

/** A `portal_webhooks` row. */
export interface PortalWebhookRow {
  readonly portal_id: string
  readonly organization_id: string
  readonly url: string
  readonly secret: string | null
  readonly enabled: number
  readonly created_at: string
  readonly updated_at: string
}

/** A `webhook_deliveries` row. */
export interface DeliveryRow {
  readonly id: string
  readonly organization_id: string
  readonly portal_id: string
  readonly event: string
  readonly test: number
  readonly end_user_id: string | null
  readonly url: string
  readonly body: string
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly next_attempt_at: number
  readonly lease_until: number | null
  readonly created_at: string
  readonly finished_at: string | null
}

/** A `webhook_attempts` row. */
export interface AttemptRow {
  readonly delivery_id: string
  readonly attempt: number
  readonly manual: number
  readonly started_at: string
  readonly duration_ms: number
  readonly status_code: number | null
  readonly error: string | null
}

/** A place in the creation order of deliveries. */
export interface ListenCursor {
  readonly createdAt: string
  readonly id: string
}

/** What a new delivery holds. */
export interface NewDelivery {
  readonly id: string
  readonly organizationId: string
  readonly portalId: string
  readonly event: string
  readonly test: boolean
  readonly endUserId: string | null
  readonly url: string
  readonly body: string
  readonly nextAttemptAt: number
  readonly createdAt: string
}

/** Rows of the webhook tables. */
export class WebhookRepo extends Effect.Service<WebhookRepo>()("svc/WebhookRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = <A>(rows: ReadonlyArray<A>): A | null => rows[0] ?? null
    return {
      /** A Portal's endpoint, or null. */
      endpoint: (portalId: string) =>
        Effect.orDie(sql<PortalWebhookRow>`SELECT * FROM portal_webhooks WHERE portal_id = ${portalId}`).pipe(Effect.map(first)),
      /** Creates or replaces a Portal's endpoint. */
      saveEndpoint: (row: PortalWebhookRow) =>
        Effect.orDie(sql`INSERT INTO portal_webhooks (portal_id, organization_id, url, secret, enabled, created_at, updated_at)
          VALUES (${row.portal_id}, ${row.organization_id}, ${row.url}, ${row.secret}, ${row.enabled}, ${row.created_at}, ${row.updated_at})
          ON CONFLICT (portal_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, enabled = excluded.enabled,
            updated_at = excluded.updated_at`.pipe(writing(portalWebhooksWrites))),
      /** Records a delivery; false when a signup event for that end user already exists (it fires once). */
      insertDelivery: (delivery: NewDelivery) =>
        Effect.orDie(sql<{ id: string }>`INSERT INTO webhook_deliveries
          (id, organization_id, portal_id, event, test, end_user_id, url, body, status, attempts, next_attempt_at, created_at)
          VALUES (${delivery.id}, ${delivery.organizationId}, ${delivery.portalId}, ${delivery.event}, ${delivery.test ? 1 : 0},
            ${delivery.endUserId}, ${delivery.url}, ${delivery.body}, 'pending', 0, ${delivery.nextAttemptAt}, ${delivery.createdAt})
          ON CONFLICT DO NOTHING RETURNING id`.pipe(writing(webhookDeliveriesWrites))).pipe(Effect.map((rows) => rows.length === 1)),
      /** Whether a signup event was ever recorded for `endUserId`. */
      signupRecorded: (endUserId: string) =>
        Effect.orDie(sql<{ n: number }>`SELECT count(*) AS n FROM webhook_deliveries WHERE end_user_id = ${endUserId}`).pipe(
          Effect.map((rows) => (rows[0]?.n ?? 0) > 0)
        ),
      /** One delivery, or null. */
      delivery: (id: string) => Effect.orDie(sql<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE id = ${id}`).pipe(Effect.map(first)),
      /** A Portal's deliveries, newest first. */
      deliveries: (portalId: string, limit: number) =>
        Effect.orDie(sql<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE portal_id = ${portalId}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`),
      /** The attempts of deliveries, oldest first. */
      attempts: (deliveryIds: ReadonlyArray<string>) =>
        deliveryIds.length === 0
          ? Effect.succeed([] as ReadonlyArray<AttemptRow>)
          : Effect.orDie(sql<AttemptRow>`SELECT * FROM webhook_attempts WHERE ${sql.in("delivery_id", deliveryIds)} ORDER BY attempt`),
      /** Ids of pending deliveries due at `now` and not leased, oldest first. */
      due: (now: number, limit: number) =>
        Effect.orDie(sql<{ id: string }>`SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now}
          AND (lease_until IS NULL OR lease_until < ${now}) ORDER BY next_attempt_at, id LIMIT ${limit}`).pipe(
          Effect.map((rows) => rows.map((row) => row.id))
        ),
      /** The earliest time a pending delivery is due, or null. */
      nextDue: Effect.orDie(sql<{ at: number | null }>`SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`).pipe(
        Effect.map((rows) => rows[0]?.at ?? null)
      ),
      /** Takes a due delivery for one attempt until `leaseUntil`; false when another worker has it or it is no longer due. */
      claim: (id: string, now: number, leaseUntil: number) =>
        Effect.orDie(sql<{ id: string }>`UPDATE webhook_deliveries SET lease_until = ${leaseUntil}
          WHERE id = ${id} AND status = 'pending' AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until < ${now})
          RETURNING id`.pipe(writing(webhookDeliveriesWrites))).pipe(Effect.map((rows) => rows.length === 1)),
      /** Records an attempt and the delivery's new state. */
      recordAttempt: (
        attempt: AttemptRow,
        next: { readonly status: DeliveryRow["status"]; readonly attempts: number; readonly nextAttemptAt: number; readonly finishedAt: string | null }
      ) =>
        Effect.orDie(
          Effect.zipRight(
            sql`INSERT INTO webhook_attempts (delivery_id, attempt, manual, started_at, duration_ms, status_code, error)
              VALUES (${attempt.delivery_id}, ${attempt.attempt}, ${attempt.manual}, ${attempt.started_at}, ${attempt.duration_ms},
                ${attempt.status_code}, ${attempt.error})`.pipe(writing(webhookAttemptsWrites)),
            sql`UPDATE webhook_deliveries SET status = ${next.status}, attempts = ${next.attempts}, next_attempt_at = ${next.nextAttemptAt},
              lease_until = NULL, finished_at = ${next.finishedAt} WHERE id = ${attempt.delivery_id}`.pipe(writing(webhookDeliveriesWrites))
          )
        ),
      /** The newest delivery's place in creation order (of one organization, or of all), or null when there is none. */
      newest: (organizationId: string | null) =>
        Effect.orDie(
          organizationId === null
            ? sql<ListenCursor>`SELECT created_at AS "createdAt", id FROM webhook_deliveries ORDER BY created_at DESC, id DESC LIMIT 1`
            : sql<ListenCursor>`SELECT created_at AS "createdAt", id FROM webhook_deliveries WHERE organization_id = ${organizationId}
                ORDER BY created_at DESC, id DESC LIMIT 1`
        ).pipe(Effect.map(first)),
      /** Deliveries created after `cursor` (all when null), in creation order, with their Portal's signing secret. */
      after: (cursor: ListenCursor | null, organizationId: string | null, limit: number) => {
        const later = cursor === null ? sql`1 = 1` : sql`(d.created_at > ${cursor.createdAt} OR (d.created_at = ${cursor.createdAt} AND d.id > ${cursor.id}))`
        const inOrganization = organizationId === null ? sql`1 = 1` : sql`d.organization_id = ${organizationId}`
        return Effect.orDie(sql<DeliveryRow & { readonly secret: string | null }>`SELECT d.*, w.secret FROM webhook_deliveries d
          LEFT JOIN portal_webhooks w ON w.portal_id = d.portal_id
          WHERE ${later} AND ${inOrganization} ORDER BY d.created_at, d.id LIMIT ${limit}`)
      },
      /** The number of attempts recorded for a delivery (automatic and manual). */
      attemptCount: (deliveryId: string) =>
        Effect.orDie(sql<{ n: number }>`SELECT count(*) AS n FROM webhook_attempts WHERE delivery_id = ${deliveryId}`).pipe(
          Effect.map((rows) => rows[0]?.n ?? 0)
        )
    }
  })
}) {}
