/**
 * User groups: create, list with member counts, read with roster and grants, rename, delete. A plan
 * group (one that belongs to a tier plan) is joined by holding the plan and cannot be renamed or
 * deleted here. Knows nothing of HTTP, so the MCP server can reuse it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound, PlanGroupLocked } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors, type Page } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import type { CreateGroup, Group, GroupDetail, PatchGroup } from "./domain.js"
import { GroupRepo, type GroupRow } from "./repo.js"

/** A group as the contract shows it. */
export const toGroup = (row: GroupRow): Group => ({
  id: row.id,
  name: row.name,
  description: row.description,
  memberCount: Number(row.member_count),
  planId: row.plan_id,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** The `not_found` of a group id in a path. */
export const groupNotFound = (id: string) => new NotFound({ message: `No user group '${id}' in this organization.` })

/** User-group operations for a calling principal. */
export class GroupService extends Effect.Service<GroupService>()("svc/GroupService", {
  effect: Effect.gen(function* () {
    const repo = yield* GroupRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)

    /** The group of the organization, or 404 (for ids in a path). */
    const found = (organizationId: string, id: string): Effect.Effect<GroupRow, NotFound> =>
      Effect.flatMap(repo.find(organizationId, id), (row) => (row ? Effect.succeed(row) : Effect.fail(groupNotFound(id))))

    /** The group unless it is a plan group (409 `plan_group` for an update or delete). */
    const changeable = (organizationId: string, id: string, doing: string) =>
      Effect.flatMap(found(organizationId, id), (row) =>
        row.plan_id === null
          ? Effect.succeed(row)
          : Effect.fail(new PlanGroupLocked({ message: `Group '${id}' belongs to a plan; a plan's group cannot be ${doing}.` }))
      )

    return {
      found,

      /** Creates a group that belongs to no plan. */
      create: (actor: Principal, input: CreateGroup): Effect.Effect<Group> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            const id = newId()
            yield* repo.insert(org, { id, name: input.name, description: input.description ?? null }, isoAt(clock.now()))
            return toGroup((yield* repo.find(org, id))!)
          })
        ),

      /** One page of the organization's groups (plan groups included, marked by `planId`), oldest first. */
      list: (
        actor: Principal,
        request: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
      ): Effect.Effect<Page<Group>, InvalidRequest> =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const list = `user-groups:${org}`
          const page = yield* cursors.request(list, request)
          const rows = yield* repo.list(org, page)
          const served = cursors.page(list, page, rows, (row) => [row.created_at, row.id])
          return { items: served.items.map(toGroup), nextCursor: served.nextCursor }
        }),

      /** The group with its roster (direct members, or the plan's holders) and its grants. */
      get: (actor: Principal, id: string): Effect.Effect<GroupDetail, NotFound> =>
        Effect.gen(function* () {
          const row = yield* found(actor.organization.id, id)
          const members = row.plan_id === null ? yield* repo.directMembers(row.id) : yield* repo.planHolders(row.plan_id)
          const grants = yield* repo.grants(row.id)
          return {
            group: toGroup(row),
            members: members.map((m) => ({
              endUserId: m.end_user_id,
              email: m.email,
              state: m.state,
              joinedAt: m.joined_at,
              via: row.plan_id === null ? ("direct" as const) : ("plan" as const)
            })),
            grants: grants.map((g) => ({ grantId: g.id, targetKind: g.target_kind, targetId: g.target_id, createdAt: g.created_at }))
          }
        }),

      /** Changes the given properties (at least one); `description: null` clears it. */
      update: (actor: Principal, id: string, patch: PatchGroup): Effect.Effect<{ readonly ok: true }, InvalidRequest | NotFound | PlanGroupLocked> =>
        inTransaction(
          Effect.gen(function* () {
            if (patch.name === undefined && patch.description === undefined) {
              return yield* new InvalidRequest({ message: "give at least one property to change: name, description." })
            }
            const row = yield* changeable(actor.organization.id, id, "renamed or changed")
            yield* repo.update(
              actor.organization.id,
              id,
              { name: patch.name ?? row.name, description: patch.description === undefined ? row.description : patch.description },
              isoAt(clock.now())
            )
            return { ok: true as const }
          })
        ),

      /** Deletes the group; memberships, grants and admissions go with it, accounts, plans and credits stay. */
      remove: (actor: Principal, id: string): Effect.Effect<{ readonly ok: true }, NotFound | PlanGroupLocked> =>
        inTransaction(
          Effect.gen(function* () {
            yield* changeable(actor.organization.id, id, "deleted")
            yield* repo.remove(actor.organization.id, id)
            return { ok: true as const }
          })
        )
    }
  }),
  dependencies: [GroupRepo.Default, Cursors.Default]
}) {}
