/**
 * Delivery of the outbox over SMTP when `SVC_SMTP_URL` is set (`smtp://user:pass@host:port`, or
 * `smtps://` for implicit TLS): a worker of `svc serve` polls for unsent emails and sends each with
 * nodemailer, outside any transaction, recording every attempt and its error. A failed email is
 * tried again 10 s, 70 s, 6 min 10 s and 36 min 10 s after it was recorded (on the service's clock),
 * five attempts in all; without `SVC_SMTP_URL` the outbox only records.
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
  /** Milliseconds before each retry, counted from the previous one's due time; their count plus one is the attempts per email. */
  readonly retryDelaysMs: ReadonlyArray<number>
}

/** How long a claimed attempt keeps other processes off an email (longer than any SMTP exchange). */
const claimMs = 120_000

/** Retries of a failed email: 10 s, 1 min, 5 min and 30 min apart. */
export const defaultRetryDelaysMs = [10_000, 60_000, 300_000, 1_800_000] as const

/** When attempt `attempts + 1` of an email recorded at `createdAt` is due (milliseconds since the epoch). */
export const dueAt = (createdAt: string, attempts: number, retryDelaysMs: ReadonlyArray<number>): number =>
  Date.parse(createdAt) + retryDelaysMs.slice(0, attempts).reduce((sum, delay) => sum + delay, 0)

/** Settings from the environment (`SVC_SMTP_URL`, `SVC_SMTP_FROM`), or null when no SMTP server is configured. */
export const mailDeliveryFromEnv = (env: NodeJS.ProcessEnv = process.env): MailDeliverySettings | null => {
  const smtpUrl = env.SVC_SMTP_URL?.trim()
  if (!smtpUrl) return null
  return { smtpUrl, from: env.SVC_SMTP_FROM?.trim() || "svc <no-reply@localhost>", pollInterval: Duration.seconds(1), retryDelaysMs: defaultRetryDelaysMs }
}

/**
 * Sends every unsent email whose next attempt is due (oldest first, up to `batch`), each attempt
 * claimed first so that two instances never send it twice; answers how many were sent.
 */
export const deliverPending = (settings: MailDeliverySettings, send: (email: OutboxEmail) => Promise<unknown>, batch = 50) =>
  Effect.gen(function* () {
    const repo = yield* OutboxRepo
    const clock = yield* AppClock
    const now = clock.now()
    const due = (yield* repo.unsent(settings.retryDelaysMs.length + 1, batch * 4))
      .filter((email) => dueAt(email.createdAt, email.attempts, settings.retryDelaysMs) <= now)
      .slice(0, batch)
    let sent = 0
    for (const email of due) {
      if (!(yield* repo.claimAttempt(email.id, email.attempts, isoAt(now), isoAt(now + claimMs)))) continue
      const outcome = yield* Effect.either(Effect.tryPromise(() => send(email)))
      if (outcome._tag === "Right") sent++
      yield* repo.recordOutcome(
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
