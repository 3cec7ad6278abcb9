/** How end-user rows become the contract's shapes, and the credit arithmetic of a subscription's pool. */
import type { EndUser, Subscription } from "./domain.js"
import type { EndUserRow, SubscriptionRow } from "./rows.js"

/** Credits left in a pool: bonus credits first, then what is left of the allowance; never below zero. */
export const creditsRemaining = (row: Pick<SubscriptionRow, "credit_allowance" | "credits_used" | "bonus_credits">): number =>
  Math.max(0, row.bonus_credits) + Math.max(0, row.credit_allowance - row.credits_used)

/** A subscription row as the API shows it. */
export const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id,
  tierPlanId: row.tier_plan_id,
  tierPlanName: row.tier_plan_name,
  status: row.status === "paid" ? "paid" : "active",
  creditAllowance: row.credit_allowance,
  creditsUsed: row.credits_used,
  bonusCredits: row.bonus_credits,
  creditsRemaining: creditsRemaining(row),
  creditsResetAt: row.credits_reset_at
})

/** An account's identity as `POST /end-users` answers it. */
export const toEndUser = (row: Pick<EndUserRow, "id" | "email" | "full_name" | "created_at">): EndUser => ({
  id: row.id,
  email: row.email,
  fullName: row.full_name,
  createdAt: row.created_at
})

/** The same day of the next month (the month's last day when it has fewer days), as ISO 8601. */
export const oneMonthOn = (ms: number): string => {
  const start = new Date(ms)
  const next = new Date(ms)
  next.setUTCDate(1)
  next.setUTCMonth(start.getUTCMonth() + 1)
  const lastDay = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate()
  next.setUTCDate(Math.min(start.getUTCDate(), lastDay))
  return next.toISOString()
}
