/** SQL of group grants and of the targets they name (inside the caller's transaction). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { GrantRow } from "./repo.js"

/** Group grants in SQL. */
export class GrantRepo extends Effect.Service<GrantRepo>()("svc/GroupGrantRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      /** Whether `targetId` names a target of `kind` in the organization: an App, Flow or Agent (`app`), or a Suite. */
      targetExists: (organizationId: string, kind: "app" | "suite", targetId: string) =>
        Effect.orDie(
          (kind === "suite"
            ? sql<{ id: string }>`SELECT id FROM suites WHERE organization_id = ${organizationId} AND id = ${targetId}`
            : sql<{ id: string }>`SELECT id FROM apps WHERE organization_id = ${organizationId} AND id = ${targetId}
                UNION ALL SELECT id FROM flows WHERE organization_id = ${organizationId} AND id = ${targetId}
                UNION ALL SELECT id FROM agents WHERE organization_id = ${organizationId} AND id = ${targetId}`
          ).pipe(Effect.map((rows) => rows.length > 0))
        ),

      /** Adds the grant unless the group holds an identical one; answers the grant and whether it is new. */
      add: (organizationId: string, grant: { id: string; groupId: string; targetKind: "app" | "suite"; targetId: string }, at: string) =>
        Effect.orDie(
          Effect.gen(function* () {
            const inserted = yield* sql<{ id: string }>`INSERT INTO group_grants (id, organization_id, group_id, target_kind, target_id, created_at)
              VALUES (${grant.id}, ${organizationId}, ${grant.groupId}, ${grant.targetKind}, ${grant.targetId}, ${at})
              ON CONFLICT (group_id, target_kind, target_id) DO NOTHING RETURNING id`
            if (inserted.length === 1) return { grantId: grant.id, created: true }
            const held = yield* sql<GrantRow>`SELECT id, target_kind, target_id, created_at FROM group_grants
              WHERE group_id = ${grant.groupId} AND target_kind = ${grant.targetKind} AND target_id = ${grant.targetId}`
            return { grantId: held[0]!.id, created: false }
          })
        ),

      /** Removes a grant of the group; answers whether there was one. */
      remove: (groupId: string, grantId: string) =>
        Effect.orDie(
          sql<{ id: string }>`DELETE FROM group_grants WHERE group_id = ${groupId} AND id = ${grantId} RETURNING id`.pipe(
            Effect.map((rows) => rows.length === 1)
          )
        )
    }
  })
}) {}
