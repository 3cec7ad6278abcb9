/**
 * Where the credit of a run comes from, and the SQL that takes and gives it back. A run by the
 * organization (an API key, the CLI, MCP) spends the organization's credits; a run by an end user at
 * a Portal spends that person's subscription credit pools: bonus credits first (the oldest
 * subscription holding any first), then plan allowances (the oldest subscription with any left
 * first). Each take is one conditional UPDATE that never goes below zero; call it inside the
 * transaction that records the execution.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { giveBackOrganizationCreditTx, organizationCreditsLeft, takeOrganizationCreditTx } from "../../identity/credit-repo.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { statementsOn, type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const executionsWrites = declareWrites("executions")
const subscriptionsWrites = declareWrites("subscriptions")

/** Whose credits a run spends. */
export type CreditSource = { readonly kind: "organization" } | { readonly kind: "subscription"; readonly endUserId: string }

/** The organization's credits: the source of every run that does not name another. */
export const organizationCredits: CreditSource = { kind: "organization" }

/** The credit one execution took: the organization's, or one pool of one subscription. */
export type CreditCharge =
  | { readonly kind: "organization"; readonly organizationId: string }
  | { readonly kind: "subscription"; readonly subscriptionId: string; readonly pool: "bonus" | "allowance" }

/** Taking, giving back and counting credits. */
export class CreditRepo extends Effect.Service<CreditRepo>()("svc/CreditRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection

    const statements = statementsOn(sql)

    return {
      /** Takes one credit from `source`; null when none is left (nothing changed). */
      take: (organizationId: string, source: CreditSource): Effect.Effect<CreditCharge | null> =>
        statements(takeCreditTx(organizationId, source)),

      /** Gives back the credit `charge` took (a subscription removed since keeps nothing). */
      giveBack: (charge: CreditCharge): Effect.Effect<void> => statements(giveBackCreditTx(charge)),

      /** Records on a `running` execution which subscription pool paid for it (the organization's credits need no record). */
      recordCharge: (executionId: string, charge: CreditCharge): Effect.Effect<void> => statements(recordChargeTx(executionId, charge)),

      /** Credits `source` has left (read connection). */
      left: (organizationId: string, source: CreditSource): Effect.Effect<number> =>
        Effect.orDie(
          source.kind === "organization"
            ? organizationCreditsLeft(reader, organizationId)
            : reader
                .all<{ n: number }>(
                  `SELECT COALESCE(SUM(bonus_credits + CASE WHEN credit_allowance > credits_used THEN credit_allowance - credits_used ELSE 0 END), 0) AS n FROM subscriptions
                    WHERE organization_id = ? AND end_user_id = ?`,
                  [organizationId, source.endUserId]
                )
                .pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}

/** Takes one credit from `source` (a transaction body step); null when none is left (nothing changed). */
export function* takeCreditTx(organizationId: string, source: CreditSource): TxBody<CreditCharge | null> {
  if (source.kind === "organization") {
    return (yield* takeOrganizationCreditTx(organizationId)) ? { kind: "organization", organizationId } : null
  }
  for (const pool of ["bonus", "allowance"] as const) {
    const has = pool === "bonus" ? "bonus_credits > 0" : "credits_used < credit_allowance"
    const spend = pool === "bonus" ? "bonus_credits = bonus_credits - 1" : "credits_used = credits_used + 1"
    const rows = yield* txAll<{ id: string }>(
      `UPDATE subscriptions SET ${spend}
       WHERE id = (SELECT id FROM subscriptions WHERE organization_id = ? AND end_user_id = ? AND ${has} ORDER BY created_at, id LIMIT 1)
         AND ${has} RETURNING id`,
      [organizationId, source.endUserId],
      subscriptionsWrites
    )
    const subscriptionId = rows[0]?.id
    if (subscriptionId !== undefined) return { kind: "subscription", subscriptionId, pool }
  }
  return null
}

/** Gives back the credit `charge` took (a transaction body step). */
export function* giveBackCreditTx(charge: CreditCharge): TxBody<void> {
  if (charge.kind === "organization") {
    yield* giveBackOrganizationCreditTx(charge.organizationId)
  } else if (charge.pool === "bonus") {
    yield* txRun("UPDATE subscriptions SET bonus_credits = bonus_credits + 1 WHERE id = ?", [charge.subscriptionId], subscriptionsWrites)
  } else {
    yield* txRun("UPDATE subscriptions SET credits_used = credits_used - 1 WHERE id = ? AND credits_used > 0", [charge.subscriptionId], subscriptionsWrites)
  }
}

/** Records on a `running` execution which subscription pool paid for it (a transaction body step). */
export function* recordChargeTx(executionId: string, charge: CreditCharge): TxBody<void> {
  if (charge.kind === "organization") return
  yield* txRun("UPDATE executions SET credit_subscription_id = ?, credit_pool = ? WHERE id = ?", [charge.subscriptionId, charge.pool, executionId], executionsWrites)
}
