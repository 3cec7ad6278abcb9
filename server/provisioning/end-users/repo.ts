/** SQL of end users, their subscriptions, direct group memberships and per-user grants. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import type { TierPlanRow } from "../plans/domain.js"

/** An `end_users` row. */
export interface EndUserRow {
  readonly id: string
  readonly organization_id: string
  readonly email: string
  readonly email_key: string
  readonly full_name: string | null
  readonly state: "active" | "pending" | "revoked" | "deleted"
  readonly created_at: string
  readonly updated_at: string
  readonly revoked_at: string | null
  readonly deleted_at: string | null
}

/** A subscription row with its plan's name. */
export interface SubscriptionRow {
  readonly id: string
  readonly organization_id: string
  readonly end_user_id: string
  readonly tier_plan_id: string
  readonly tier_plan_name: string
  readonly status: string
  readonly credit_allowance: number
  readonly credits_used: number
  readonly bonus_credits: number
  readonly credits_reset_at: string
  readonly created_at: string
}

/** A per-user grant row. */
export interface GrantRow {
  readonly id: string
  readonly organization_id: string
  readonly end_user_id: string
  readonly target_kind: "app" | "suite"
  readonly target_id: string
  readonly deployment_id: string | null
  readonly created_at: string
}

/** What the listing filters on. */
export interface EndUserFilter {
  readonly emailKey: string | null
  readonly updatedSince: string | null
}

/** One row of the provisioning look-up: an account, a plan or a group, in generic columns. */
interface LookupRow {
  readonly kind: "account" | "plan" | "group"
  readonly id: string
  readonly t1: string | null
  readonly t2: string | null
  readonly t3: string | null
  readonly t4: string | null
  readonly t5: string | null
  readonly t6: string | null
  readonly n: number | null
}

const listColumns = "id, email, full_name, state, created_at, updated_at"

/** Rows of `end_users` and what hangs off them. */
export class EndUserRepo extends Effect.Service<EndUserRepo>()("svc/EndUserRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const first = <A>(rows: ReadonlyArray<A>) => rows[0] ?? null

    return {
      /**
       * What provisioning checks, in one statement (the hot path): the account of an email key (any
       * state), the organization's live plans among `planIds`, and its groups among `groupIds`.
       */
      lookup: (organizationId: string, key: string, planIds: ReadonlyArray<string>, groupIds: ReadonlyArray<string>) =>
        Effect.orDie(sql<LookupRow>`
          SELECT 'account' AS kind, id, email AS t1, full_name AS t2, state AS t3, created_at AS t4, updated_at AS t5, revoked_at AS t6, NULL AS n
            FROM end_users WHERE organization_id = ${organizationId} AND email_key = ${key}
          ${planIds.length === 0 ? sql`` : sql`UNION ALL SELECT 'plan', id, name, group_id, NULL, created_at, NULL, NULL, credit_allowance
            FROM tier_plans WHERE organization_id = ${organizationId} AND archived_at IS NULL AND ${sql.in("id", planIds)}`}
          ${groupIds.length === 0 ? sql`` : sql`UNION ALL SELECT 'group', id, plan_id, NULL, NULL, NULL, NULL, NULL, NULL
            FROM user_groups WHERE organization_id = ${organizationId} AND ${sql.in("id", groupIds)}`}`).pipe(
          Effect.map((rows) => {
            let account: EndUserRow | null = null
            const plans: Array<TierPlanRow> = []
            const groups = new Map<string, string | null>()
            for (const row of rows) {
              if (row.kind === "account") {
                account = {
                  id: row.id,
                  organization_id: organizationId,
                  email: row.t1!,
                  email_key: key,
                  full_name: row.t2,
                  state: row.t3 as EndUserRow["state"],
                  created_at: row.t4!,
                  updated_at: row.t5!,
                  revoked_at: row.t6,
                  deleted_at: null
                }
              } else if (row.kind === "plan") {
                plans.push({ id: row.id, organization_id: organizationId, name: row.t1!, group_id: row.t2!, credit_allowance: row.n!, created_at: row.t4!, archived_at: null })
              } else groups.set(row.id, row.t1)
            }
            return { account, plans, groups }
          })
        ),
      /** The account by id, unless deleted. */
      live: (organizationId: string, id: string) =>
        Effect.orDie(
          sql<EndUserRow>`SELECT * FROM end_users WHERE organization_id = ${organizationId} AND id = ${id} AND state <> 'deleted'`
        ).pipe(Effect.map(first)),
      /** Inserts an account unless its email key exists (a concurrent create); `true` when inserted. */
      insertIfAbsent: (row: EndUserRow) =>
        Effect.orDie(sql<{ id: string }>`INSERT INTO end_users ${sql.insert({ ...row })}
          ON CONFLICT (organization_id, email_key) DO NOTHING RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
      /** Sets an account's state, name and times. */
      update: (id: string, changes: Pick<EndUserRow, "state" | "full_name" | "updated_at" | "revoked_at" | "deleted_at">) =>
        Effect.orDie(sql`UPDATE end_users SET state = ${changes.state}, full_name = ${changes.full_name}, updated_at = ${changes.updated_at},
          revoked_at = ${changes.revoked_at}, deleted_at = ${changes.deleted_at} WHERE id = ${id}`),
      /** Marks an account changed now. */
      touch: (id: string, at: string) => Effect.orDie(sql`UPDATE end_users SET updated_at = ${at} WHERE id = ${id}`),

      /** Which of `ids` name a row of `table` in the organization. */
      existing: (table: "apps" | "flows" | "agents" | "suites", organizationId: string, ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.succeed(new Set<string>())
          : Effect.orDie(
              sql<{ id: string }>`SELECT id FROM ${sql(table)} WHERE organization_id = ${organizationId} AND ${sql.in("id", ids)}`
            ).pipe(Effect.map((rows) => new Set(rows.map((row) => row.id)))),

      /** An account's subscriptions with their plans' names, oldest first. */
      subscriptions: (endUserId: string) =>
        Effect.orDie(sql<SubscriptionRow>`SELECT s.*, p.name AS tier_plan_name FROM subscriptions s
          JOIN tier_plans p ON p.id = s.tier_plan_id WHERE s.end_user_id = ${endUserId} ORDER BY s.created_at, s.id`),
      /** Inserts subscriptions, skipping plans already held. */
      insertSubscriptions: (rows: ReadonlyArray<Omit<SubscriptionRow, "tier_plan_name">>) =>
        rows.length === 0
          ? Effect.void
          : Effect.orDie(sql`INSERT INTO subscriptions ${sql.insert(rows.map((row) => ({ ...row })))}
              ON CONFLICT (end_user_id, tier_plan_id) DO NOTHING`),
      /** One subscription of an account. */
      subscription: (endUserId: string, id: string) =>
        Effect.orDie(sql<SubscriptionRow>`SELECT s.*, p.name AS tier_plan_name FROM subscriptions s
          JOIN tier_plans p ON p.id = s.tier_plan_id WHERE s.end_user_id = ${endUserId} AND s.id = ${id}`).pipe(Effect.map(first)),
      /** Deletes one subscription (and so its credit pool); `true` when there was one. */
      deleteSubscription: (endUserId: string, id: string) =>
        Effect.orDie(sql<{ id: string }>`DELETE FROM subscriptions WHERE end_user_id = ${endUserId} AND id = ${id} RETURNING id`).pipe(
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
            sql`UPDATE subscriptions SET bonus_credits = bonus_credits + ${adjustment.applied} WHERE id = ${adjustment.subscriptionId}`,
            sql`INSERT INTO bonus_credit_adjustments (id, organization_id, subscription_id, amount, applied, reason, created_at)
              VALUES (${adjustment.id}, ${adjustment.organizationId}, ${adjustment.subscriptionId}, ${adjustment.amount},
                      ${adjustment.applied}, ${adjustment.reason}, ${adjustment.at})`
          )
        ),
      /** Sets a subscription's status (`paid` marks one live with a payment processor). */
      setSubscriptionStatus: (organizationId: string, id: string, status: string) =>
        Effect.orDie(sql<{ id: string }>`UPDATE subscriptions SET status = ${status}
          WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),

      /** Direct group memberships of an account, oldest first. */
      groupIds: (endUserId: string) =>
        Effect.orDie(sql<{ group_id: string }>`SELECT group_id FROM group_members WHERE end_user_id = ${endUserId}
          ORDER BY created_at, group_id`).pipe(Effect.map((rows) => rows.map((row) => row.group_id))),
      /** Adds direct memberships, keeping the ones already there. */
      insertMembers: (rows: ReadonlyArray<{ group_id: string; end_user_id: string; organization_id: string; created_at: string }>) =>
        rows.length === 0
          ? Effect.void
          : Effect.orDie(sql`INSERT INTO group_members ${sql.insert(rows.map((row) => ({ ...row })))}
              ON CONFLICT (group_id, end_user_id) DO NOTHING`),

      /** Per-user grant ids of an account, oldest first. */
      grantIds: (endUserId: string) =>
        Effect.orDie(sql<{ id: string }>`SELECT id FROM end_user_grants WHERE end_user_id = ${endUserId} ORDER BY created_at, id`).pipe(
          Effect.map((rows) => rows.map((row) => row.id))
        ),
      /** Adds per-user grants, keeping identical ones; answers how many are new. */
      insertGrants: (rows: ReadonlyArray<GrantRow>) =>
        rows.length === 0
          ? Effect.succeed(0)
          : Effect.orDie(sql<{ id: string }>`INSERT INTO end_user_grants ${sql.insert(rows.map((row) => ({ ...row })))}
              ON CONFLICT (end_user_id, target_kind, target_id) DO NOTHING RETURNING id`).pipe(Effect.map((inserted) => inserted.length)),
      /** Deletes one per-user grant; `true` when there was one. */
      deleteGrant: (endUserId: string, id: string) =>
        Effect.orDie(sql<{ id: string }>`DELETE FROM end_user_grants WHERE end_user_id = ${endUserId} AND id = ${id} RETURNING id`).pipe(
          Effect.map((rows) => rows.length > 0)
        ),

      /** Removes everything an account holds: subscriptions (with their pools), memberships and grants. */
      strip: (endUserId: string) =>
        Effect.orDie(
          Effect.all([
            sql`DELETE FROM subscriptions WHERE end_user_id = ${endUserId}`,
            sql`DELETE FROM group_members WHERE end_user_id = ${endUserId}`,
            sql`DELETE FROM end_user_grants WHERE end_user_id = ${endUserId}`
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
