/**
 * The webhook delivery worker of `svc serve`: delivers due deliveries, then sleeps until the next
 * is due, a poll interval passes, or a new delivery wakes it. Deliveries live in the database, so
 * a restart (even after `kill -9`) carries on where the last process stopped.
 */
import { Duration, Effect, Layer } from "effect"
import { WebhookSettings } from "./domain.js"
import { WebhookService, WebhookSignal } from "./service.js"

/** The worker, running for the server's lifetime. */
export const WebhookWorkerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const service = yield* WebhookService
    const signal = yield* WebhookSignal
    const settings = yield* WebhookSettings
    const pass = Effect.gen(function* () {
      yield* service.deliverDue
      const wait = yield* service.untilNextDue
      const sleepMs = wait === null ? settings.pollMs : Math.min(settings.pollMs, Math.max(wait, 10))
      yield* Effect.raceFirst(Effect.sleep(Duration.millis(sleepMs)), signal.woken)
    }).pipe(
      Effect.catchAllCause((cause) => Effect.zipRight(Effect.logError("webhook delivery pass failed", cause), Effect.sleep(Duration.millis(settings.pollMs))))
    )
    yield* Effect.forkScoped(Effect.forever(pass))
  })
)
