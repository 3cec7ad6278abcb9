/** SQL of Portal admissions (writes inside the caller's transaction). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import type { AdmissionRow } from "./domain.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const portalAdmissionsWrites = declareWrites("portal_admissions")

/** Portal admissions in SQL. */
export class AdmissionRepo extends Effect.Service<AdmissionRepo>()("svc/AdmissionRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (portalId: string, groupId: string) =>
      sql<AdmissionRow>`SELECT a.group_id, g.name AS group_name, g.plan_id, a.created_at
        FROM portal_admissions a JOIN user_groups g ON g.id = a.group_id
        WHERE a.portal_id = ${portalId} AND a.group_id = ${groupId}`.pipe(Effect.map((rows) => rows[0]!))
    return {
      /** Admits a group at a Portal unless it is admitted; answers the admission and whether it is new. */
      admit: (organizationId: string, portalId: string, groupId: string, at: string) =>
        Effect.orDie(
          Effect.gen(function* () {
            const inserted = yield* sql<{ group_id: string }>`INSERT INTO portal_admissions (portal_id, group_id, organization_id, created_at)
              VALUES (${portalId}, ${groupId}, ${organizationId}, ${at})
              ON CONFLICT (portal_id, group_id) DO NOTHING RETURNING group_id`.pipe(writing(portalAdmissionsWrites))
            return { row: yield* one(portalId, groupId), created: inserted.length === 1 }
          })
        ),

      /** Stops admitting a group; answers whether it was admitted. */
      remove: (portalId: string, groupId: string) =>
        Effect.orDie(
          sql<{ group_id: string }>`DELETE FROM portal_admissions WHERE portal_id = ${portalId} AND group_id = ${groupId}
            RETURNING group_id`.pipe(writing(portalAdmissionsWrites), Effect.map((rows) => rows.length === 1))
        ),

      /** One page of a Portal's admissions, oldest first (`limit + 1` rows). */
      list: (portalId: string, page: PageRequest) =>
        Effect.orDie(
          page.after === null
            ? sql<AdmissionRow>`SELECT a.group_id, g.name AS group_name, g.plan_id, a.created_at
                FROM portal_admissions a JOIN user_groups g ON g.id = a.group_id
                WHERE a.portal_id = ${portalId} ORDER BY a.created_at, a.group_id LIMIT ${page.limit + 1}`
            : sql<AdmissionRow>`SELECT a.group_id, g.name AS group_name, g.plan_id, a.created_at
                FROM portal_admissions a JOIN user_groups g ON g.id = a.group_id
                WHERE a.portal_id = ${portalId} AND (a.created_at, a.group_id) > (${String(page.after[0])}, ${String(page.after[1])})
                ORDER BY a.created_at, a.group_id LIMIT ${page.limit + 1}`
        )
    }
  })
}) {}
