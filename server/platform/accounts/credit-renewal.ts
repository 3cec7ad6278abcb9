/**
 * Monthly credits: each organization's balance is set back to its plan's monthly credits (and
 * `credits_used` to 0) on every monthly anniversary of its creation; credits left over do not roll
 * over, and a plan change takes effect at the next renewal. A worker of `svc serve` renews what is
 * due; each renewal is one conditional update, so two instances never renew twice.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer } from "effect"
import { AppClock, isoAt } from "../clock.js"
import { type Plan, planCaps } from "./domain.js"

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

interface DueRow {
  readonly id: string
  readonly plan: Plan
  readonly created_at: string
  readonly credits_renew_at: string | null
}

/**
 * Renews every organization due at `nowMs` and schedules the ones never scheduled; answers how
 * many balances were renewed.
 */
export const renewDueCredits = (nowMs: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = isoAt(nowMs)
    const due = yield* sql<DueRow>`SELECT id, plan, created_at, credits_renew_at FROM organizations
      WHERE credits_renew_at IS NULL OR credits_renew_at <= ${now}`
    let renewed = 0
    for (const org of due) {
      const next = nextAnniversary(org.created_at, now)
      if (org.credits_renew_at === null) {
        yield* sql`UPDATE organizations SET credits_renew_at = ${next} WHERE id = ${org.id} AND credits_renew_at IS NULL`
        continue
      }
      const rows = yield* sql<{ id: string }>`UPDATE organizations SET credits_remaining = ${planCaps[org.plan].monthlyCredits},
        credits_used = 0, credits_renew_at = ${next} WHERE id = ${org.id} AND credits_renew_at = ${org.credits_renew_at} RETURNING id`
      renewed += rows.length
    }
    return renewed
  }).pipe(Effect.orDie)

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
