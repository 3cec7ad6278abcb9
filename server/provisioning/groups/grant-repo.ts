/** SQL of group grants (inside the caller's transaction); whether a target exists is `grantTargetIdsTx`'s answer. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import { type GrantTargetKind, grantTargetIdsTx } from "../access/targets.js"
import type { GrantRow } from "./repo.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const groupGrantsWrites = declareWrites("group_grants")

/** Group grants in SQL. */
export class GrantRepo extends Effect.Service<GrantRepo>()("svc/GroupGrantRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    return {
      /** Whether `targetId` names a target of `kind` in the organization: an App, Flow or Agent (`app`), or a Suite. */
      targetExists: (organizationId: string, kind: GrantTargetKind, targetId: string): Effect.Effect<boolean> =>
        Effect.map(statements(grantTargetIdsTx(organizationId, kind, [targetId])), (found) => found.has(targetId)),

      /** Adds the grant unless the group holds an identical one; answers the grant and whether it is new. */
      add: (organizationId: string, grant: { id: string; groupId: string; targetKind: "app" | "suite"; targetId: string }, at: string) =>
        Effect.orDie(
          Effect.gen(function* () {
            const inserted = yield* sql<{ id: string }>`INSERT INTO group_grants (id, organization_id, group_id, target_kind, target_id, created_at)
              VALUES (${grant.id}, ${organizationId}, ${grant.groupId}, ${grant.targetKind}, ${grant.targetId}, ${at})
              ON CONFLICT (group_id, target_kind, target_id) DO NOTHING RETURNING id`.pipe(writing(groupGrantsWrites))
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
            writing(groupGrantsWrites),
            Effect.map((rows) => rows.length === 1)
          )
        )
    }
  })
}) {}
