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
import { ReadConnection } from "../../platform/sql/read-connection.js"

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

    const takeFromPool = (organizationId: string, endUserId: string, pool: "bonus" | "allowance") => {
      const has = pool === "bonus" ? sql`bonus_credits > 0` : sql`credits_used < credit_allowance`
      const spend = pool === "bonus" ? sql`bonus_credits = bonus_credits - 1` : sql`credits_used = credits_used + 1`
      return sql<{ id: string }>`UPDATE subscriptions SET ${spend}
        WHERE id = (SELECT id FROM subscriptions WHERE organization_id = ${organizationId} AND end_user_id = ${endUserId} AND ${has}
          ORDER BY created_at, id LIMIT 1) AND ${has} RETURNING id`.pipe(Effect.map((rows) => rows[0]?.id ?? null))
    }

    return {
      /** Takes one credit from `source`; null when none is left (nothing changed). */
      take: (organizationId: string, source: CreditSource): Effect.Effect<CreditCharge | null> =>
        Effect.orDie(
          Effect.gen(function* () {
            if (source.kind === "organization") {
              const rows = yield* sql<{ id: string }>`UPDATE organizations SET credits_remaining = credits_remaining - 1, credits_used = credits_used + 1
                WHERE id = ${organizationId} AND credits_remaining > 0 RETURNING id`
              return rows.length === 1 ? { kind: "organization", organizationId } : null
            }
            for (const pool of ["bonus", "allowance"] as const) {
              const subscriptionId = yield* takeFromPool(organizationId, source.endUserId, pool)
              if (subscriptionId !== null) return { kind: "subscription", subscriptionId, pool }
            }
            return null
          })
        ),

      /** Gives back the credit `charge` took (a subscription removed since keeps nothing). */
      giveBack: (charge: CreditCharge): Effect.Effect<void> =>
        Effect.orDie(
          charge.kind === "organization"
            ? sql`UPDATE organizations SET credits_remaining = credits_remaining + 1, credits_used = credits_used - 1 WHERE id = ${charge.organizationId}`
            : charge.pool === "bonus"
              ? sql`UPDATE subscriptions SET bonus_credits = bonus_credits + 1 WHERE id = ${charge.subscriptionId}`
              : sql`UPDATE subscriptions SET credits_used = credits_used - 1 WHERE id = ${charge.subscriptionId} AND credits_used > 0`
        ).pipe(Effect.asVoid),

      /** Records on a `running` execution which subscription pool paid for it (the organization's credits need no record). */
      recordCharge: (executionId: string, charge: CreditCharge): Effect.Effect<void> =>
        charge.kind === "organization"
          ? Effect.void
          : Effect.orDie(
              sql`UPDATE executions SET credit_subscription_id = ${charge.subscriptionId}, credit_pool = ${charge.pool} WHERE id = ${executionId}`
            ).pipe(Effect.asVoid),

      /** Credits `source` has left (read connection). */
      left: (organizationId: string, source: CreditSource): Effect.Effect<number> =>
        Effect.orDie(
          source.kind === "organization"
            ? reader
                .all<{ n: number }>("SELECT credits_remaining AS n FROM organizations WHERE id = ?", [organizationId])
                .pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))
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
