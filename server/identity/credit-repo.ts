/**
 * SQL of an organization's credits (`organizations.credits_*`), owned here and asked by every family
 * that spends or renews them: one credit taken (never below zero) or given back, the balance left,
 * and the monthly renewal's look-up and conditional updates. Each statement sets credit columns
 * only, so a charge counts as a write of `organizations#credits` (`write-tracking.ts`), not of the
 * credentials an organization's row also holds.
 */
import { Effect } from "effect"
import type { Reads } from "../platform/sql/read-connection.js"
import { type TxBody, txAll, txRun } from "../platform/sql/write-fast-path.js"
import type { Plan } from "./domain.js"
import { declareWrites } from "../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const organizationsCreditsWrites = declareWrites("organizations#credits")

/** Takes one of the organization's credits (a transaction body step); false when none is left (nothing changed). */
export function* takeOrganizationCreditTx(organizationId: string): TxBody<boolean> {
  const rows = yield* txAll<{ id: string }>(
    "UPDATE organizations SET credits_remaining = credits_remaining - 1, credits_used = credits_used + 1 WHERE id = ? AND credits_remaining > 0 RETURNING id",
    [organizationId],
    organizationsCreditsWrites
  )
  return rows.length === 1
}

/** Gives back one credit the organization spent (a transaction body step). */
export function* giveBackOrganizationCreditTx(organizationId: string): TxBody<void> {
  yield* txRun("UPDATE organizations SET credits_remaining = credits_remaining + 1, credits_used = credits_used - 1 WHERE id = ?", [organizationId], organizationsCreditsWrites)
}

/** The organization's credits left (read connection; 0 for an unknown organization). */
export const organizationCreditsLeft = (reader: Reads, organizationId: string): Effect.Effect<number> =>
  Effect.orDie(
    reader
      .all<{ n: number }>("SELECT credits_remaining AS n FROM organizations WHERE id = ?", [organizationId])
      .pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))
  )

/** An organization as the renewal sees it. */
export interface RenewalRow {
  readonly id: string
  readonly plan: Plan
  readonly created_at: string
  readonly credits_renew_at: string | null
}

/** The organizations due for renewal at `now` (ISO), and those never scheduled. */
export function* dueForRenewalTx(now: string): TxBody<ReadonlyArray<RenewalRow>> {
  return yield* txAll<RenewalRow>("SELECT id, plan, created_at, credits_renew_at FROM organizations WHERE credits_renew_at IS NULL OR credits_renew_at <= ?", [now])
}

/** Schedules the first renewal of an organization never scheduled (unless another instance just did). */
export function* scheduleRenewalTx(organizationId: string, next: string): TxBody<void> {
  yield* txRun("UPDATE organizations SET credits_renew_at = ? WHERE id = ? AND credits_renew_at IS NULL", [next, organizationId], organizationsCreditsWrites)
}

/**
 * Sets the balance back to `credits` (none used) and schedules `next`, only while the renewal due is
 * still `due` (so two instances never renew twice); true when this call renewed.
 */
export function* renewCreditsTx(organizationId: string, credits: number, next: string, due: string): TxBody<boolean> {
  const rows = yield* txAll<{ id: string }>(
    `UPDATE organizations SET credits_remaining = ?,
        credits_used = 0, credits_renew_at = ? WHERE id = ? AND credits_renew_at = ? RETURNING id`,
    [credits, next, organizationId, due],
    organizationsCreditsWrites
  )
  return rows.length === 1
}
