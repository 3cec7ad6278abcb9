/** SQL of end users, their subscriptions, direct group memberships and per-user grants. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import type { EndUserRow, SubscriptionRow } from "./rows.js"
import {
  groupIdsTx,
  subscriptionsTx,
  touchAccountTx,
  updateAccountTx
} from "./tx-repo.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const bonusCreditAdjustmentsWrites = declareWrites("bonus_credit_adjustments")
const endUserGrantsWrites = declareWrites("end_user_grants")
const groupMembersWrites = declareWrites("group_members")
const subscriptionsWrites = declareWrites("subscriptions")

export type { EndUserRow, GrantRow, SubscriptionRow } from "./rows.js"

/** What the listing filters on. */
export interface EndUserFilter {
  readonly emailKey: string | null
  readonly updatedSince: string | null
}

const listColumns = "id, email, full_name, state, created_at, updated_at"

/** Rows of `end_users` and what hangs off them. */
export class EndUserRepo extends Effect.Service<EndUserRepo>()("svc/EndUserRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    const reader = yield* ReadConnection
    const first = <A>(rows: ReadonlyArray<A>) => rows[0] ?? null

    return {
      /** How many end-user accounts the organization has, deleted ones left out (as listings leave them out). */
      count: (organizationId: string) => organizationRowCount(sql, "end_users", organizationId, sql`AND state <> 'deleted'`),
      /** The account by id, unless deleted. */
      live: (organizationId: string, id: string) =>
        Effect.orDie(
          sql<EndUserRow>`SELECT * FROM end_users WHERE organization_id = ${organizationId} AND id = ${id} AND state <> 'deleted'`
        ).pipe(Effect.map(first)),
      /** Sets an account's state, name and times. */
      update: (id: string, changes: Pick<EndUserRow, "state" | "full_name" | "updated_at" | "revoked_at" | "deleted_at">) =>
        statements(updateAccountTx(id, changes)),
      /** Marks an account changed now. */
      touch: (id: string, at: string) => statements(touchAccountTx(id, at)),

      /** An account's subscriptions with their plans' names, oldest first. */
      subscriptions: (endUserId: string) => statements(subscriptionsTx(endUserId)),
      /** One subscription of an account. */
      subscription: (endUserId: string, id: string) =>
        Effect.orDie(sql<SubscriptionRow>`SELECT s.*, p.name AS tier_plan_name FROM subscriptions s
          JOIN tier_plans p ON p.id = s.tier_plan_id WHERE s.end_user_id = ${endUserId} AND s.id = ${id}`).pipe(Effect.map(first)),
      /** Deletes one subscription (and so its credit pool); `true` when there was one. */
      deleteSubscription: (endUserId: string, id: string) =>
        Effect.orDie(sql<{ id: string }>`DELETE FROM subscriptions WHERE end_user_id = ${endUserId} AND id = ${id} RETURNING id`.pipe(writing(subscriptionsWrites))).pipe(
          Effect.map((rows) => rows.length > 0)
        ),
      /** Sets a subscription's bonus credits and records the adjustment. */
      adjustBonus: (adjustment: {
        readonly id: string
        readonly organizationId: string
        readonly subscriptionId: string
        readonly amount: number
        readonly applied: number
        readonly reason: string | null
        readonly at: string
      }) =>
        Effect.orDie(
          Effect.zipRight(
            sql`UPDATE subscriptions SET bonus_credits = bonus_credits + ${adjustment.applied} WHERE id = ${adjustment.subscriptionId}`.pipe(writing(subscriptionsWrites)),
            sql`INSERT INTO bonus_credit_adjustments (id, organization_id, subscription_id, amount, applied, reason, created_at)
              VALUES (${adjustment.id}, ${adjustment.organizationId}, ${adjustment.subscriptionId}, ${adjustment.amount},
                      ${adjustment.applied}, ${adjustment.reason}, ${adjustment.at})`.pipe(writing(bonusCreditAdjustmentsWrites))
          )
        ),
      /** Sets a subscription's status (`paid` marks one live with a payment processor). */
      setSubscriptionStatus: (organizationId: string, id: string, status: string) =>
        Effect.orDie(sql<{ id: string }>`UPDATE subscriptions SET status = ${status}
          WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(writing(subscriptionsWrites))).pipe(Effect.map((rows) => rows.length > 0)),

      /** Direct group memberships of an account, oldest first. */
      groupIds: (endUserId: string) => statements(groupIdsTx(endUserId)),
      /** Per-user grant ids of an account, oldest first. */
      grantIds: (endUserId: string) =>
        Effect.orDie(sql<{ id: string }>`SELECT id FROM end_user_grants WHERE end_user_id = ${endUserId} ORDER BY created_at, id`).pipe(
          Effect.map((rows) => rows.map((row) => row.id))
        ),
      /** Deletes one per-user grant; `true` when there was one. */
      deleteGrant: (endUserId: string, id: string) =>
        Effect.orDie(sql<{ id: string }>`DELETE FROM end_user_grants WHERE end_user_id = ${endUserId} AND id = ${id} RETURNING id`.pipe(writing(endUserGrantsWrites))).pipe(
          Effect.map((rows) => rows.length > 0)
        ),

      /** Removes everything an account holds: subscriptions (with their pools), memberships and grants. */
      strip: (endUserId: string) =>
        Effect.orDie(
          Effect.all([
            sql`DELETE FROM subscriptions WHERE end_user_id = ${endUserId}`.pipe(writing(subscriptionsWrites)),
            sql`DELETE FROM group_members WHERE end_user_id = ${endUserId}`.pipe(writing(groupMembersWrites)),
            sql`DELETE FROM end_user_grants WHERE end_user_id = ${endUserId}`.pipe(writing(endUserGrantsWrites))
          ])
        ),

      /** Up to `limit + 1` listed accounts (never deleted ones), oldest first, after the page's position. */
      page: (organizationId: string, filter: EndUserFilter, page: PageRequest) => {
        const conditions = ["organization_id = ?", "state <> 'deleted'"]
        const params: Array<string | number> = [organizationId]
        if (filter.emailKey !== null) {
          conditions.push("email_key = ?")
          params.push(filter.emailKey)
        }
        if (filter.updatedSince !== null) {
          conditions.push("updated_at >= ?")
          params.push(filter.updatedSince)
        }
        if (page.after !== null) {
          conditions.push("(created_at, id) > (?, ?)")
          params.push(String(page.after[0] ?? ""), String(page.after[1] ?? ""))
        }
        params.push(page.limit + 1)
        return Effect.orDie(
          reader.values<[string, string, string | null, "active" | "pending" | "revoked", string, string]>(
            `SELECT ${listColumns} FROM end_users WHERE ${conditions.join(" AND ")} ORDER BY created_at, id LIMIT ?`,
            params
          )
        )
      }
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
