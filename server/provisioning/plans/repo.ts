/** SQL of tier plans and the plan groups they own. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import type { TierPlanRow } from "./domain.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const tierPlansWrites = declareWrites("tier_plans")
const userGroupsWrites = declareWrites("user_groups")

const afterClause = (page: PageRequest) => (page.after === null ? "" : "AND (created_at, id) > (?, ?)")
const afterParams = (page: PageRequest) => (page.after === null ? [] : [page.after[0] ?? "", page.after[1] ?? ""])

/** Rows of `tier_plans` (and the `user_groups` row each owns). */
export class TierPlanRepo extends Effect.Service<TierPlanRepo>()("svc/TierPlanRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    return {
      /** How many plans the organization has, archived ones included. */
      count: (organizationId: string) => organizationRowCount(sql, "tier_plans", organizationId),
      /** Every plan of the organization, archived ones included, oldest first (administration: `svc plans list`). */
      all: (organizationId: string) =>
        Effect.orDie(sql<TierPlanRow>`SELECT * FROM tier_plans WHERE organization_id = ${organizationId} ORDER BY created_at, id`),
      /** Inserts a plan and its plan group (named after the plan); run inside a transaction. */
      insert: (row: TierPlanRow) =>
        Effect.orDie(
          Effect.zipRight(
            sql`INSERT INTO user_groups (id, organization_id, name, description, plan_id, created_at, updated_at)
              VALUES (${row.group_id}, ${row.organization_id}, ${row.name}, NULL, ${row.id}, ${row.created_at}, ${row.created_at})`.pipe(writing(userGroupsWrites)),
            sql`INSERT INTO tier_plans (id, organization_id, name, credit_allowance, group_id, created_at, archived_at)
              VALUES (${row.id}, ${row.organization_id}, ${row.name}, ${row.credit_allowance}, ${row.group_id}, ${row.created_at}, NULL)`.pipe(writing(tierPlansWrites))
          )
        ),
      /** The organization's plan, archived or not. */
      find: (organizationId: string, id: string) =>
        Effect.orDie(sql<TierPlanRow>`SELECT * FROM tier_plans WHERE organization_id = ${organizationId} AND id = ${id}`).pipe(
          Effect.map((rows) => rows[0] ?? null)
        ),
      /** Marks a plan archived (once: the first archive time is kept). */
      archive: (organizationId: string, id: string, at: string) =>
        Effect.orDie(sql`UPDATE tier_plans SET archived_at = COALESCE(archived_at, ${at}) WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(writing(tierPlansWrites))),
      /** Up to `limit + 1` plans, oldest first, after the page's position. */
      page: (organizationId: string, page: PageRequest) =>
        Effect.orDie(
          reader.all<TierPlanRow>(
            `SELECT * FROM tier_plans WHERE organization_id = ? ${afterClause(page)} ORDER BY created_at, id LIMIT ?`,
            [organizationId, ...afterParams(page), page.limit + 1]
          )
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
