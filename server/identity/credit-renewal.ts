/**
 * Monthly credits: each organization's balance is set back to its plan's monthly credits (and
 * `credits_used` to 0) on every monthly anniversary of its creation; credits left over do not roll
 * over, and a plan change takes effect at the next renewal. A worker of `svc serve` renews what is
 * due; each renewal is one conditional update, so two instances never renew twice.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer } from "effect"
import { AppClock, isoAt } from "../platform/clock.js"
import { statementsOn } from "../platform/sql/write-fast-path.js"
import { dueForRenewalTx, renewCreditsTx, scheduleRenewalTx } from "./credit-repo.js"
import { planCaps } from "./domain.js"

/** The same day `months` months after `iso` (the month's last day when it is shorter), same time of day, in UTC. */
export const addMonths = (iso: string, months: number): string => {
  const date = new Date(iso)
  const day = date.getUTCDate()
  const target = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1, date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds(), date.getUTCMilliseconds()))
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(day, lastDay))
  return target.toISOString()
}

/** The first monthly anniversary of `createdAt` strictly after `nowIso`. */
export const nextAnniversary = (createdAt: string, nowIso: string): string => {
  let months = 1
  while (addMonths(createdAt, months) <= nowIso) months += 1
  return addMonths(createdAt, months)
}

/**
 * Renews every organization due at `nowMs` and schedules the ones never scheduled; answers how
 * many balances were renewed.
 */
export const renewDueCredits = (nowMs: number) =>
  Effect.gen(function* () {
    const statements = statementsOn(yield* SqlClient.SqlClient)
    const now = isoAt(nowMs)
    const due = yield* statements(dueForRenewalTx(now))
    let renewed = 0
    for (const org of due) {
      const next = nextAnniversary(org.created_at, now)
      if (org.credits_renew_at === null) {
        yield* statements(scheduleRenewalTx(org.id, next))
        continue
      }
      if (yield* statements(renewCreditsTx(org.id, planCaps[org.plan].monthlyCredits, next, org.credits_renew_at))) renewed += 1
    }
    return renewed
  })

/** The renewal worker: looks for due organizations every `pollMs` (a minute by default). */
export const CreditRenewalLive = (pollMs = 60_000) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const clock = yield* AppClock
      const pass = Effect.flatMap(Effect.suspend(() => renewDueCredits(clock.now())), () => Effect.sleep(Duration.millis(pollMs))).pipe(
        Effect.catchAllCause((cause) => Effect.zipRight(Effect.logError("credit renewal failed", cause), Effect.sleep(Duration.millis(pollMs))))
      )
      yield* Effect.forkScoped(Effect.forever(pass))
    })
  )
