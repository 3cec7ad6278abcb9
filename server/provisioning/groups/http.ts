/** HTTP handlers of the user-group endpoints: thin adapters over the group services. */
import { Effect } from "effect"
import { CurrentPrincipal } from "../../http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../../http/responses.js"
import { parseFields, project } from "../../platform/pagination.js"
import { UserGroupsContract } from "./api.js"
import { groupFields } from "./domain.js"
import { GroupGrants } from "./grants.js"
import { GroupMembers } from "./members.js"
import { GroupService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** A created group as `create` declares it (stored for idempotent replays). */
const createdGroup = declaredAnswer(UserGroupsContract.groups["userGroups"]!.endpoints["create"]!.successSchema)

/** Handlers of the `userGroups` group. */
export const UserGroupsHttpLive = serveGroup(UserGroupsContract, "userGroups", (handlers) =>
  Effect.gen(function* () {
    const groups = yield* GroupService
    const members = yield* GroupMembers
    const grants = yield* GroupGrants
    return handlers
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            Effect.map(groups.create(actor, payload), (group) => ({ group })),
            createdGroup
          )
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const fields = yield* parseFields(urlParams.fields, groupFields)
          const page = yield* groups.list(yield* CurrentPrincipal, { limit: urlParams.limit, cursor: urlParams.cursor })
          return { groups: page.items.map((group) => project(group, fields)), nextCursor: page.nextCursor }
        })
      )
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => groups.get(actor, path.groupId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => groups.update(actor, path.groupId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => groups.remove(actor, path.groupId)))
      .handle("addMember", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => members.add(actor, path.groupId, payload)))
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (actor) => members.remove(actor, path.groupId, path.endUserId))
      )
      .handle("addGrant", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => grants.add(actor, path.groupId, payload)))
      .handle("removeGrant", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => grants.remove(actor, path.groupId, path.grantId)))
  })
)
