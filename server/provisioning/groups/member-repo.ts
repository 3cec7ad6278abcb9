/**
 * SQL of direct group memberships (inside the caller's transaction); the end users they name are
 * looked up and created by email through the end-users repository.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import { accountByEmailTx, accountByIdTx } from "../end-users/tx-repo.js"
import type { EndUserRow } from "./repo.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const groupMembersWrites = declareWrites("group_members")

/** Group memberships in SQL. */
export class MemberRepo extends Effect.Service<MemberRepo>()("svc/GroupMemberRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    return {
      /** The end user of the organization with this id, or null (the end-users repository's look-up). */
      endUser: (organizationId: string, id: string): Effect.Effect<EndUserRow | null> => statements(accountByIdTx(organizationId, id)),

      /**
       * The end user of the organization keyed on `emailKey`, creating a `pending` one when there is
       * none (the end-users repository's identity created by email).
       */
      endUserByEmail: (organizationId: string, email: { id: string; email: string; key: string }, at: string) =>
        Effect.map(statements(accountByEmailTx(organizationId, email, at)), ({ account, created }) => ({ endUser: account as EndUserRow, created })),

      /** Adds a direct membership; answers whether it is new. */
      add: (organizationId: string, groupId: string, endUserId: string, at: string) =>
        Effect.orDie(
          sql<{ end_user_id: string }>`INSERT INTO group_members (group_id, end_user_id, organization_id, created_at)
            VALUES (${groupId}, ${endUserId}, ${organizationId}, ${at})
            ON CONFLICT (group_id, end_user_id) DO NOTHING RETURNING end_user_id`.pipe(writing(groupMembersWrites), Effect.map((rows) => rows.length === 1))
        ),

      /** Removes a direct membership; answers whether there was one. */
      remove: (groupId: string, endUserId: string) =>
        Effect.orDie(
          sql<{ end_user_id: string }>`DELETE FROM group_members WHERE group_id = ${groupId} AND end_user_id = ${endUserId}
            RETURNING end_user_id`.pipe(writing(groupMembersWrites), Effect.map((rows) => rows.length === 1))
        )
    }
  })
}) {}
