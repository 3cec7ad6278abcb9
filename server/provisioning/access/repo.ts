/**
 * SQL of access: the groups an end user is in (direct memberships, and the plan groups of the plans
 * held), narrowed to the groups a Portal admits when one is named, their grants and the per-user
 * grants, Suites expanded to their Apps, kept only while the target still exists in the organization
 * (`grantTargetIdsTx`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import { planHoldersFrom } from "../groups/repo.js"
import { grantTargetIdsTx } from "./targets.js"

/** Access in SQL. */
export class AccessRepo extends Effect.Service<AccessRepo>()("svc/AccessRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    return {
      /** The account's state, or null when the organization has no such end user. */
      state: (organizationId: string, endUserId: string) =>
        Effect.orDie(
          sql<{ state: string }>`SELECT state FROM end_users WHERE organization_id = ${organizationId} AND id = ${endUserId}`.pipe(
            Effect.map((rows) => rows[0]?.state ?? null)
          )
        ),

      /** The ids of the Apps, Flows and Agents the end user's groups and per-user grants allow, sorted. */
      granted: (organizationId: string, endUserId: string, portalId: string | undefined) => {
        const admitted =
          portalId === undefined
            ? sql``
            : sql`WHERE group_id IN (SELECT group_id FROM portal_admissions WHERE portal_id = ${portalId} AND organization_id = ${organizationId})`
        const userGrantScope = portalId === undefined ? sql`` : sql`AND (deployment_id IS NULL OR deployment_id = ${portalId})`
        return Effect.orDie(
          sql<{ id: string }>`WITH member_groups AS (
              SELECT group_id FROM group_members WHERE end_user_id = ${endUserId} AND organization_id = ${organizationId}
              UNION
              SELECT g.id FROM user_groups g WHERE g.organization_id = ${organizationId}
                AND EXISTS (SELECT 1 ${sql.literal(planHoldersFrom("g.plan_id"))} AND s.end_user_id = ${endUserId})
            ),
            counted_groups AS (SELECT group_id FROM member_groups ${admitted}),
            targets AS (
              SELECT target_kind, target_id FROM group_grants WHERE group_id IN (SELECT group_id FROM counted_groups)
              UNION
              SELECT target_kind, target_id FROM end_user_grants
                WHERE end_user_id = ${endUserId} AND organization_id = ${organizationId} ${userGrantScope}
            ),
            granted AS (
              SELECT target_id AS id FROM targets WHERE target_kind = 'app'
              UNION
              SELECT sa.app_id AS id FROM targets t
                JOIN suites s ON s.id = t.target_id AND s.organization_id = ${organizationId}
                JOIN suite_apps sa ON sa.suite_id = s.id
                WHERE t.target_kind = 'suite'
            )
            SELECT id FROM granted ORDER BY id`.pipe(
            Effect.flatMap((rows) => {
              const ids = rows.map((row) => row.id)
              return Effect.map(statements(grantTargetIdsTx(organizationId, "app", ids)), (existing) => ids.filter((id) => existing.has(id)))
            })
          )
        )
      }
    }
  })
}) {}
