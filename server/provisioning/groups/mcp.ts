/**
 * User-group tools of the provisioning family: groups, their members and their grants, over
 * `GroupService`, `GroupMembers` and `GroupGrants` as the `/user-groups` handlers call them. Like
 * those endpoints they need the `groups` gate (absent from the list while it is off) and
 * `end_users:read` / `end_users:write`.
 */
import { Effect } from "effect"
import { decodeBody } from "../../platform/request/decode.js"
import { AddGrant, AddMember, CreateGroup, groupFields, PatchGroup } from "./domain.js"
import { GroupGrants } from "./grants.js"
import { GroupMembers } from "./members.js"
import { GroupService } from "./service.js"
import { UserGroupsApi } from "./api.js"
import { operation } from "../../mcp-door/operation.js"
import { itemsOf } from "../../mcp-door/output.js"
import { listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../../mcp-door/tool.js"
import { confirmInput, confirmReason, endUserReason } from "../end-users/mcp.js"
import { endUserIdOf, endUserInput, groupIdOf, groupInput } from "../mcp-ids.js"
import { fieldsInput } from "../../mcp-door/shared-arguments.js"

const listOperation = operation(UserGroupsApi, "list")
const createOperation = operation(UserGroupsApi, "create")
const updateOperation = operation(UserGroupsApi, "update")
const addMemberOperation = operation(UserGroupsApi, "addMember")
const addGrantOperation = operation(UserGroupsApi, "addGrant")
const removeGrantOperation = operation(UserGroupsApi, "removeGrant")
const nameInput = operationArgument(createOperation, "name").describe("1 to 200 characters (trimmed).")
const descriptionInput = operationArgument(createOperation, "description").optional().describe("At most 2000 characters; `null` clears it.")

const listUserGroups = tool({
  name: "list_user_groups",
  description: "Every user group with its member count, oldest first; plans' groups are included and carry their `planId`.",
  input: { ...listArguments(listOperation), fields: fieldsInput(groupFields) },
  operation: listOperation,
  output: itemsOf(),
  ownArguments: { fields: fieldsList },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const page = yield* (yield* GroupService).list(principal, { limit: args.limit, cursor: args.cursor })
      return itemsPage(page, args.fields)
    })
})

const getUserGroup = tool({
  name: "get_user_group",
  description: "A user group with its roster (direct members; for a plan's group, the holders of the plan) and its grants.",
  input: { groupId: groupInput },
  operation: operation(UserGroupsApi, "get"),
  ownArguments: { groupId: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* groupIdOf(principal, args.groupId)
      return yield* (yield* GroupService).get(principal, id)
    })
})

const createUserGroup = tool({
  name: "create_user_group",
  description: "Create a user group (no plan, no members, no grants).",
  input: { name: nameInput, description: descriptionInput },
  operation: createOperation,
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const body = yield* decodeBody(CreateGroup)(args)
      return { group: yield* (yield* GroupService).create(principal, body) }
    })
})

const updateUserGroup = tool({
  name: "update_user_group",
  description: "Change a user group's `name` and/or `description` (at least one). A plan's group is refused (`plan_group`).",
  input: {
    groupId: groupInput,
    name: operationArgument(updateOperation, "name").optional().describe("1 to 200 characters (trimmed)."),
    description: operationArgument(updateOperation, "description").optional().describe("At most 2000 characters; `null` clears it.")
  },
  operation: updateOperation,
  ownArguments: { groupId: idOrName },
  handler: ({ groupId, ...patch }, { principal }) =>
    Effect.gen(function* () {
      const body = yield* decodeBody(PatchGroup)(patch)
      const id = yield* groupIdOf(principal, groupId)
      return yield* (yield* GroupService).update(principal, id, body)
    })
})

const deleteUserGroup = tool({
  name: "delete_user_group",
  description:
    "Delete a user group: its memberships, grants and Portal admissions go with it (accounts, plans and credits stay). A plan's group is refused (`plan_group`). Needs `confirm: true`.",
  input: { groupId: groupInput, confirm: confirmInput },
  operation: operation(UserGroupsApi, "delete"),
  ownArguments: { groupId: idOrName, confirm: confirmReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* groupIdOf(principal, args.groupId)
      return yield* (yield* GroupService).remove(principal, id)
    })
})

const addGroupMember = tool({
  name: "add_group_member",
  description:
    "Add a person to a user group, by `endUserId` or by `email` (exactly one; an email without an account makes a pending one). `added` is false when they were a member already. An invite is emailed unless `sendEmail` is false. A plan's group is refused (`plan_group`), a deleted account too (`deleted_identity`).",
  input: {
    groupId: groupInput,
    endUserId: operationArgument(addMemberOperation, "endUserId").optional().describe("The end user's id."),
    email: operationArgument(addMemberOperation, "email").optional().describe("The person's email."),
    sendEmail: operationArgument(addMemberOperation, "sendEmail").optional().describe("Email an invite to sign in (default true).")
  },
  operation: addMemberOperation,
  ownArguments: { groupId: idOrName },
  handler: ({ groupId, ...member }, { principal }) =>
    Effect.gen(function* () {
      const body = yield* decodeBody(AddMember)(member)
      const id = yield* groupIdOf(principal, groupId)
      return yield* (yield* GroupMembers).add(principal, id, body)
    })
})

const removeGroupMember = tool({
  name: "remove_group_member",
  description: "Remove a direct member from a user group (idempotent: `removed` is false when they were not one). The account and its plans stay.",
  input: { groupId: groupInput, endUserId: endUserInput },
  operation: operation(UserGroupsApi, "removeMember"),
  ownArguments: { groupId: idOrName, endUserId: endUserReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* groupIdOf(principal, args.groupId)
      const endUserId = yield* endUserIdOf(principal, args.endUserId)
      return yield* (yield* GroupMembers).remove(principal, id, endUserId)
    })
})

const grantGroupAccess = tool({
  name: "grant_group_access",
  description:
    "Give a user group access to an App, Flow or Agent (`targetKind: app`) or to every App of a Suite (`suite`). `created` is false when the group holds that grant already.",
  input: {
    groupId: groupInput,
    targetKind: operationArgument(addGrantOperation, "targetKind").describe("`app` (an App, Flow or Agent) or `suite`."),
    targetId: operationArgument(addGrantOperation, "targetId").describe("The App's, Flow's, Agent's or Suite's id."),
    deploymentId: operationArgument(addGrantOperation, "deploymentId").optional().describe("Not supported on group-based access (`portal_scope_unsupported`).")
  },
  operation: addGrantOperation,
  ownArguments: { groupId: idOrName },
  handler: ({ groupId, ...grant }, { principal }) =>
    Effect.gen(function* () {
      const body = yield* decodeBody(AddGrant)(grant)
      const id = yield* groupIdOf(principal, groupId)
      return yield* (yield* GroupGrants).add(principal, id, body)
    })
})

const revokeGroupGrant = tool({
  name: "revoke_group_grant",
  description: "Remove a grant from a user group (its `grantId`, from `get_user_group`).",
  input: { groupId: groupInput, grantId: operationArgument(removeGrantOperation, "grantId").describe("The grant's id.") },
  operation: removeGrantOperation,
  ownArguments: { groupId: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* groupIdOf(principal, args.groupId)
      return yield* (yield* GroupGrants).remove(principal, id, args.grantId)
    })
})

/** The user-group tools. */
export const groupTools = [
  listUserGroups,
  getUserGroup,
  createUserGroup,
  updateUserGroup,
  deleteUserGroup,
  addGroupMember,
  removeGroupMember,
  grantGroupAccess,
  revokeGroupGrant
] as const
