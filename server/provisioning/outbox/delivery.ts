/**
 * Delivery of the outbox over SMTP when `SVC_SMTP_URL` is set (`smtp://user:pass@host:port`, or
 * `smtps://` for implicit TLS): a worker of `svc serve` polls for unsent emails and sends each with
 * nodemailer, outside any transaction, recording every attempt and its error. An email is tried at
 * most `maxAttempts` times; without `SVC_SMTP_URL` the outbox only records.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import nodemailer from "nodemailer"
import { AppClock, isoAt } from "../../platform/clock.js"
import type { OutboxEmail } from "./domain.js"
import { OutboxRepo } from "./repo.js"

/** How the worker delivers. */
export interface MailDeliverySettings {
  /** The SMTP server, e.g. `smtp://user:pass@127.0.0.1:2525`. */
  readonly smtpUrl: string
  /** The sender address. */
  readonly from: string
  /** Time between polls for unsent email. */
  readonly pollInterval: Duration.Duration
  /** Attempts per email before it is given up (its `lastError` stays). */
  readonly maxAttempts: number
}

/** Settings from the environment (`SVC_SMTP_URL`, `SVC_SMTP_FROM`), or null when no SMTP server is configured. */
export const mailDeliveryFromEnv = (env: NodeJS.ProcessEnv = process.env): MailDeliverySettings | null => {
  const smtpUrl = env.SVC_SMTP_URL?.trim()
  if (!smtpUrl) return null
  return { smtpUrl, from: env.SVC_SMTP_FROM?.trim() || "svc <no-reply@localhost>", pollInterval: Duration.seconds(1), maxAttempts: 5 }
}

/** Sends every unsent email once (oldest first, up to `batch`); answers how many were sent. */
export const deliverPending = (settings: MailDeliverySettings, send: (email: OutboxEmail) => Promise<unknown>, batch = 50) =>
  Effect.gen(function* () {
    const repo = yield* OutboxRepo
    const clock = yield* AppClock
    let sent = 0
    for (const email of yield* repo.unsent(settings.maxAttempts, batch)) {
      const outcome = yield* Effect.either(Effect.tryPromise(() => send(email)))
      if (outcome._tag === "Right") sent++
      yield* repo.recordAttempt(
        email.id,
        outcome._tag === "Right"
          ? { sentAt: isoAt(clock.now()), error: null }
          : { sentAt: null, error: String((outcome.left.cause as Error | undefined)?.message ?? outcome.left.cause).slice(0, 1000) }
      )
    }
    return sent
  })

/** The delivery worker: polls while the server runs, when `SVC_SMTP_URL` is set. */
export const MailDeliveryLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const settings = mailDeliveryFromEnv()
    if (settings === null) return
    const transport = nodemailer.createTransport(settings.smtpUrl)
    yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))
    const send = (email: OutboxEmail) => transport.sendMail({ from: settings.from, to: email.to, subject: email.subject, text: email.body })
    const round = deliverPending(settings, send).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("mail delivery round failed", cause))
    )
    yield* Effect.forkScoped(Effect.repeat(round, Schedule.spaced(settings.pollInterval)))
  })
).pipe(Layer.provide(OutboxRepo.Default))
