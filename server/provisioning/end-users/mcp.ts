/**
 * End-user tools of the provisioning family (`end_users:read` / `end_users:write`, admins): thin
 * adapters over `EndUserService`, called as the `/end-users` handlers call it, bodies decoded with
 * the same schemas (so refusals carry the same codes and messages).
 */
import { Effect } from "effect"
import * as z from "zod/v4"
import { decodeBody } from "../../platform/request/decode.js"
import { BonusCredits, EndUserListItem, ProvisionEndUser } from "./domain.js"
import { EndUserService } from "./service.js"
import { EndUsersApi } from "./api.js"
import { operation } from "../../mcp-door/operation.js"
import { itemsOf } from "../../mcp-door/output.js"
import { idsOrNamesArgument, listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../../mcp-door/tool.js"
import { bodyGroupIdOf, endUserIdOf, fieldNamesOf, endUserInput, subscriptionIdOf, subscriptionInput, tierPlanIdOf } from "../mcp-ids.js"
import { decodeUpdatedSince, fieldsInput, idsOf, updatedSinceInput } from "../../mcp-door/shared-arguments.js"

/** `confirm: true`, required by the tools that cannot be undone. */
export const confirmInput = z.literal(true).describe("Must be `true`: this cannot be undone.")

/** Why `confirm` is the tool's own. */
export const confirmReason = "MCP's own confirmation of what cannot be undone; REST's DELETE needs none"

/** Why an end-user argument is the tool's own. */
export const endUserReason = "the end user's id or email, resolved by the tool; REST takes the id in the path"

const provisionOperation = operation(EndUsersApi, "provision")
const listOperation = operation(EndUsersApi, "list")
const bonusOperation = operation(EndUsersApi, "adjustBonusCredits")
const subscriptionReason = "the subscription's id, or the id or exact name of the plan it holds, resolved by the tool"

const provisionEndUser = tool({
  name: "provision_end_user",
  description:
    "Create the end-user account of `email`, or update it in place: `fullName` when given, plans and groups added (never removed). Each plan becomes its own subscription with its own credit pool. Every plan and group is checked before anything is written. A deleted identity is refused (`deleted_identity`); a revoked one is restored.",
  input: {
    email: operationArgument(provisionOperation, "email").describe("The person's email (trimmed; compared case-insensitively)."),
    fullName: operationArgument(provisionOperation, "fullName").optional().describe("1 to 200 characters."),
    tierPlanIds: idsOrNamesArgument(provisionOperation, "tierPlanIds").optional().describe("Tier plans to hold (ids or exact names); each becomes a subscription."),
    groupIds: idsOrNamesArgument(provisionOperation, "groupIds").optional().describe("User groups to join (ids or exact names; not plans' groups)."),
    sendEmail: operationArgument(provisionOperation, "sendEmail").optional().describe("Email a welcome message (default false).")
  },
  operation: provisionOperation,
  ownArguments: { tierPlanIds: idOrName, groupIds: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const tierPlanIds = yield* idsOf(args.tierPlanIds, (given) => tierPlanIdOf(principal, given))
      const groupIds = yield* idsOf(args.groupIds, (given) => bodyGroupIdOf(principal, given, "groupIds"))
      const body = yield* decodeBody(ProvisionEndUser)({ ...args, ...(tierPlanIds === undefined ? {} : { tierPlanIds }), ...(groupIds === undefined ? {} : { groupIds }) })
      return yield* (yield* EndUserService).provision(principal, body)
    })
})

const listEndUsers = tool({
  name: "list_end_users",
  description: "End-user accounts, oldest first, with their `state` (`active`, `pending`, `revoked`); deleted accounts are never listed.",
  input: {
    email: operationArgument(listOperation, "email").optional().describe("Only the account of this email (compared case-insensitively)."),
    updatedSince: updatedSinceInput(listOperation),
    ...listArguments(listOperation),
    fields: fieldsInput(fieldNamesOf(EndUserListItem))
  },
  operation: listOperation,
  output: itemsOf(),
  ownArguments: { fields: fieldsList },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const updatedSince = yield* decodeUpdatedSince(args.updatedSince)
      const page = yield* (yield* EndUserService).list(principal, { email: args.email, updatedSince, limit: args.limit, cursor: args.cursor })
      return itemsPage(page, args.fields)
    })
})

const getEndUser = tool({
  name: "get_end_user",
  description: "An end user: identity, state, subscriptions with credit usage, groups joined directly.",
  input: { endUserId: endUserInput },
  operation: operation(EndUsersApi, "get"),
  ownArguments: { endUserId: endUserReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* endUserIdOf(principal, args.endUserId)
      return { endUser: yield* (yield* EndUserService).get(principal, id) }
    })
})

const revokeEndUser = tool({
  name: "revoke_end_user",
  description: "Revoke an end user's access (idempotent). Plans, groups and credits stay; `provision_end_user` with the email restores it.",
  input: { endUserId: endUserInput },
  operation: operation(EndUsersApi, "revoke"),
  ownArguments: { endUserId: endUserReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* endUserIdOf(principal, args.endUserId)
      return yield* (yield* EndUserService).revoke(principal, id)
    })
})

const deleteEndUser = tool({
  name: "delete_end_user",
  description:
    "Delete an end user: subscriptions (with credit pools), memberships and grants are removed and the identity is kept as deleted forever (its email can never be provisioned again). Needs `confirm: true`.",
  input: { endUserId: endUserInput, confirm: confirmInput },
  operation: operation(EndUsersApi, "delete"),
  ownArguments: { endUserId: endUserReason, confirm: confirmReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* endUserIdOf(principal, args.endUserId)
      return yield* (yield* EndUserService).remove(principal, id)
    })
})

const removeEndUserPlan = tool({
  name: "remove_end_user_plan",
  description: "Remove a plan from an end user: the subscription and its credit pool are deleted.",
  input: { endUserId: endUserInput, subscriptionId: subscriptionInput },
  operation: operation(EndUsersApi, "removeSubscription"),
  ownArguments: { endUserId: endUserReason, subscriptionId: subscriptionReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* endUserIdOf(principal, args.endUserId)
      const subscriptionId = yield* subscriptionIdOf(principal, id, args.subscriptionId)
      return yield* (yield* EndUserService).removeSubscription(principal, id, subscriptionId)
    })
})

const adjustBonusCredits = tool({
  name: "adjust_bonus_credits",
  description:
    "Add bonus credits to a subscription (spent before the allowance); a negative amount removes bonus credits, never more than there are (`applied` says what moved).",
  input: {
    endUserId: endUserInput,
    subscriptionId: subscriptionInput,
    amount: operationArgument(bonusOperation, "amount").describe("Credits to add, non-zero; negative removes bonus credits."),
    reason: operationArgument(bonusOperation, "reason").optional().describe("Why, kept with the adjustment (at most 500 characters).")
  },
  operation: bonusOperation,
  ownArguments: {
    endUserId: endUserReason,
    subscriptionId: subscriptionReason
  },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const body = yield* decodeBody(BonusCredits)({ amount: args.amount, ...(args.reason === undefined ? {} : { reason: args.reason }) })
      const id = yield* endUserIdOf(principal, args.endUserId)
      const subscriptionId = yield* subscriptionIdOf(principal, id, args.subscriptionId)
      return yield* (yield* EndUserService).adjustBonusCredits(principal, id, subscriptionId, body)
    })
})

/** The end-user tools. */
export const endUserTools = [provisionEndUser, listEndUsers, getEndUser, revokeEndUser, deleteEndUser, removeEndUserPlan, adjustBonusCredits] as const
