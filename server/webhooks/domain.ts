/** The signup webhook: its payload, a Portal's endpoint, deliveries and their attempts. */
import { Context, Layer } from "effect"

/** The one event the service sends. */
export const signupEvent = "end_user.signup" as const

/** The body of an `end_user.signup` event (spec: Events, payload fields). */
export interface SignupPayload {
  readonly event: typeof signupEvent
  readonly toolsetId: string
  readonly toolsetName: string
  readonly organizationId: string
  readonly endUser: { readonly id: string; readonly email: string; readonly createdAt: string; readonly fullName: string | null }
  readonly timestamp: string
  /** Present and true only on a test event (`svc portals webhook-test`). */
  readonly test?: true
}

/** A Portal's webhook endpoint as administration shows it (never the secret). */
export interface PortalWebhook {
  readonly portalId: string
  readonly url: string
  readonly enabled: boolean
  readonly createdAt: string
  readonly updatedAt: string
}

/** One attempt to deliver. */
export interface DeliveryAttempt {
  readonly attempt: number
  readonly manual: boolean
  readonly startedAt: string
  readonly durationMs: number
  readonly statusCode: number | null
  readonly error: string | null
}

/** A delivery: one event to one endpoint, with its attempts. */
export interface Delivery {
  readonly id: string
  readonly portalId: string
  readonly event: string
  readonly test: boolean
  readonly endUserId: string | null
  readonly url: string
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: ReadonlyArray<DeliveryAttempt>
  readonly nextAttemptAt: string | null
  readonly createdAt: string
  readonly finishedAt: string | null
}

/** How deliveries are made. */
export interface WebhookSettingsShape {
  /** Seconds before attempts 2, 3 and 4 (default 10, 60, 300). */
  readonly retryDelaysSeconds: readonly [number, number, number]
  /** Lets webhooks reach private networks beyond loopback (`--allow-private-urls`). */
  readonly allowPrivateUrls: boolean
  /** How long one attempt may take, in milliseconds (10 s). */
  readonly attemptTimeoutMs: number
  /** How often the worker looks for due deliveries when nothing woke it, in milliseconds (1 s). */
  readonly pollMs: number
}

/** The webhook settings in effect. */
export class WebhookSettings extends Context.Tag("svc/WebhookSettings")<WebhookSettings, WebhookSettingsShape>() {
  /** The defaults overridden by `overrides`. */
  static readonly layer = (overrides: Partial<WebhookSettingsShape> = {}) =>
    Layer.succeed(WebhookSettings, { retryDelaysSeconds: [10, 60, 300], allowPrivateUrls: false, attemptTimeoutMs: 10_000, pollMs: 1_000, ...overrides })
}

/** Attempts in all before a delivery fails (spec: four). */
export const maxAttempts = 4

/**
 * Attempts the worker makes at once: each waits mostly on its receiver (up to the attempt's time
 * limit), so one slow endpoint does not hold up the others, and deliveries keep up with sign-ins.
 */
export const deliveryConcurrency = 8
