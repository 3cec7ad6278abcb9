/**
 * SQL of user groups: the groups with their member counts, rosters (direct members, or the holders
 * of a plan group's plan), grants, and the end users members name. Writes run inside the caller's
 * transaction.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { statementsOn, txAll } from "../../platform/sql/write-fast-path.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const userGroupsWrites = declareWrites("user_groups")

/** A group row with its member count. */
export interface GroupRow {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly plan_id: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly member_count: number
}

/** A roster line. */
export interface MemberRow {
  readonly end_user_id: string
  readonly email: string
  readonly state: "active" | "pending" | "revoked"
  readonly joined_at: string
}

/** A grant row. */
export interface GrantRow {
  readonly id: string
  readonly target_kind: "app" | "suite"
  readonly target_id: string
  readonly created_at: string
}

/** An end user as membership needs it. */
export interface EndUserRow {
  readonly id: string
  readonly email: string
  readonly state: "active" | "pending" | "revoked" | "deleted"
}

/**
 * The plan-group rule, once: a plan group's members are the holders of its plan (the subscriptions
 * to the group's `plan_id`) whose account is not deleted. This is the SQL `FROM … WHERE …` of those
 * holders (`s` the subscription, `u` the account) for the plan `plan` names: a column such as
 * `g.plan_id` (a group without a plan matches nobody) or a `?` placeholder. Member counts, plan
 * group rosters and access all read plan groups through it.
 */
export const planHoldersFrom = (plan: string): string =>
  `FROM subscriptions s JOIN end_users u ON u.id = s.end_user_id WHERE s.tier_plan_id = ${plan} AND u.state <> 'deleted'`

/** Members who are not deleted: direct members, plus the holders of the plan for a plan group. */
const groupColumns = `g.id, g.name, g.description, g.plan_id, g.created_at, g.updated_at,
  (SELECT count(*) FROM group_members m JOIN end_users u ON u.id = m.end_user_id
    WHERE m.group_id = g.id AND u.state <> 'deleted')
  + (SELECT count(*) ${planHoldersFrom("g.plan_id")}) AS member_count`

const planHoldersText = `SELECT u.id AS end_user_id, u.email, u.state, s.created_at AS joined_at ${planHoldersFrom("?")} ORDER BY s.created_at, u.id`

/** User groups in SQL. */
export class GroupRepo extends Effect.Service<GroupRepo>()("svc/GroupRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    return {
      /** Inserts a group that belongs to no plan. */
      insert: (organizationId: string, group: { id: string; name: string; description: string | null }, at: string) =>
        Effect.orDie(
          sql`INSERT INTO user_groups ${sql.insert({
            id: group.id,
            organization_id: organizationId,
            name: group.name,
            description: group.description,
            plan_id: null,
            created_at: at,
            updated_at: at
          })}`.pipe(writing(userGroupsWrites))
        ),

      /** The group of the organization with its member count, or null. */
      find: (organizationId: string, id: string) =>
        Effect.orDie(
          sql<GroupRow>`SELECT ${sql.literal(groupColumns)} FROM user_groups g
            WHERE g.organization_id = ${organizationId} AND g.id = ${id}`.pipe(Effect.map((rows) => rows[0] ?? null))
        ),

      /** One page of the organization's groups, oldest first (`limit + 1` rows). */
      list: (organizationId: string, page: PageRequest) =>
        Effect.orDie(
          page.after === null
            ? sql<GroupRow>`SELECT ${sql.literal(groupColumns)} FROM user_groups g WHERE g.organization_id = ${organizationId}
                ORDER BY g.created_at, g.id LIMIT ${page.limit + 1}`
            : sql<GroupRow>`SELECT ${sql.literal(groupColumns)} FROM user_groups g WHERE g.organization_id = ${organizationId}
                AND (g.created_at, g.id) > (${String(page.after[0])}, ${String(page.after[1])})
                ORDER BY g.created_at, g.id LIMIT ${page.limit + 1}`
        ),

      /** Sets a group's name and description. */
      update: (organizationId: string, id: string, values: { name: string; description: string | null }, at: string) =>
        Effect.orDie(
          sql`UPDATE user_groups SET name = ${values.name}, description = ${values.description}, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(writing(userGroupsWrites))
        ),

      /** Deletes a group; its memberships, grants and admissions cascade away. */
      remove: (organizationId: string, id: string) =>
        Effect.orDie(sql`DELETE FROM user_groups WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(writing(userGroupsWrites))),

      /** The roster of a group that belongs to no plan: its direct members who are not deleted, oldest first. */
      directMembers: (groupId: string) =>
        Effect.orDie(
          sql<MemberRow>`SELECT u.id AS end_user_id, u.email, u.state, m.created_at AS joined_at
            FROM group_members m JOIN end_users u ON u.id = m.end_user_id
            WHERE m.group_id = ${groupId} AND u.state <> 'deleted' ORDER BY m.created_at, u.id`
        ),

      /** The roster of a plan group: the holders of the plan who are not deleted, by subscription time. */
      planHolders: (planId: string): Effect.Effect<ReadonlyArray<MemberRow>> => statements(txAll<MemberRow>(planHoldersText, [planId])),

      /** A group's grants, oldest first. */
      grants: (groupId: string) =>
        Effect.orDie(
          sql<GrantRow>`SELECT id, target_kind, target_id, created_at FROM group_grants
            WHERE group_id = ${groupId} ORDER BY created_at, id`
        )
    }
  })
}) {}
