/**
 * SQL of access: the groups an end user is in (direct memberships, and the plan groups of the plans
 * held), narrowed to the groups a Portal admits when one is named, their grants and the per-user
 * grants, Suites expanded to their Apps, kept only while the target still exists in the organization.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Access in SQL. */
export class AccessRepo extends Effect.Service<AccessRepo>()("svc/AccessRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
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
              SELECT p.group_id FROM subscriptions s JOIN tier_plans p ON p.id = s.tier_plan_id
                WHERE s.end_user_id = ${endUserId} AND s.organization_id = ${organizationId}
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
            SELECT id FROM granted WHERE id IN (
              SELECT id FROM apps WHERE organization_id = ${organizationId}
              UNION ALL SELECT id FROM flows WHERE organization_id = ${organizationId}
              UNION ALL SELECT id FROM agents WHERE organization_id = ${organizationId}
            ) ORDER BY id`.pipe(Effect.map((rows) => rows.map((row) => row.id)))
        )
      }
    }
  })
}) {}
