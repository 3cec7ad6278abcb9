/** SQL of direct group memberships and of the end users they name (inside the caller's transaction). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { EndUserRow } from "./repo.js"

/** Group memberships in SQL. */
export class MemberRepo extends Effect.Service<MemberRepo>()("svc/GroupMemberRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = <A>(rows: ReadonlyArray<A>) => rows[0] ?? null
    return {
      /** The end user of the organization with this id, or null. */
      endUser: (organizationId: string, id: string) =>
        Effect.orDie(
          sql<EndUserRow>`SELECT id, email, state FROM end_users WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
            Effect.map(one)
          )
        ),

      /**
       * The end user of the organization keyed on `emailKey`, creating a `pending` one when there is
       * none (concurrent calls create one account: the key is unique).
       */
      endUserByEmail: (organizationId: string, email: { id: string; email: string; key: string }, at: string) =>
        Effect.orDie(
          Effect.gen(function* () {
            yield* sql`INSERT INTO end_users (id, organization_id, email, email_key, full_name, state, created_at, updated_at)
              VALUES (${email.id}, ${organizationId}, ${email.email}, ${email.key}, NULL, 'pending', ${at}, ${at})
              ON CONFLICT (organization_id, email_key) DO NOTHING`
            const rows = yield* sql<EndUserRow & { created: number }>`SELECT id, email, state, CASE WHEN id = ${email.id} THEN 1 ELSE 0 END AS created
              FROM end_users WHERE organization_id = ${organizationId} AND email_key = ${email.key}`
            const row = rows[0]!
            return { endUser: { id: row.id, email: row.email, state: row.state } as EndUserRow, created: row.created === 1 }
          })
        ),

      /** Adds a direct membership; answers whether it is new. */
      add: (organizationId: string, groupId: string, endUserId: string, at: string) =>
        Effect.orDie(
          sql<{ end_user_id: string }>`INSERT INTO group_members (group_id, end_user_id, organization_id, created_at)
            VALUES (${groupId}, ${endUserId}, ${organizationId}, ${at})
            ON CONFLICT (group_id, end_user_id) DO NOTHING RETURNING end_user_id`.pipe(Effect.map((rows) => rows.length === 1))
        ),

      /** Removes a direct membership; answers whether there was one. */
      remove: (groupId: string, endUserId: string) =>
        Effect.orDie(
          sql<{ end_user_id: string }>`DELETE FROM group_members WHERE group_id = ${groupId} AND end_user_id = ${endUserId}
            RETURNING end_user_id`.pipe(Effect.map((rows) => rows.length === 1))
        )
    }
  })
}) {}
