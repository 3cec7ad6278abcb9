/**
 * Id arguments of the provisioning tools: a tier plan, user group or Portal by id or exact name
 * (over the services' own lists), an end user by id or email, a subscription by its id or its plan's
 * id or name. Where REST answers a body id it cannot find with its own code (`tier_not_found`,
 * `group_not_found`), a name that matches nothing is answered with that code too.
 */
import { Effect, type Schema } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../identity/domain.js"
import { GroupNotFound, NotFound, TierNotFound } from "../platform/errors.js"
import { pageSize } from "../platform/pagination.js"
import { EndUserService } from "./end-users/service.js"
import { GroupService } from "./groups/service.js"
import { TierPlanService } from "./plans/service.js"
import { PortalService } from "./portals/service.js"
import { collectAll, resolveId } from "../mcp-door/resolve.js"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The field names of a listed resource, for its list tool's `fields`. */
export const fieldNamesOf = (schema: { readonly fields: Schema.Struct.Fields }) => Object.keys(schema.fields) as [string, ...Array<string>]

/** A group argument. */
export const groupInput = z.string().min(1).describe("The user group's id or exact name.")
/** A Portal argument. */
export const portalInput = z.string().min(1).describe("The Portal's id or exact name.")
/** An end-user argument. */
export const endUserInput = z.string().min(1).describe("The end user's id or email.")
/** A subscription argument. */
export const subscriptionInput = z.string().min(1).describe("The subscription's id, or the id or exact name of the plan it holds.")

/** The tier plan id an argument names (an unmatched name is `tier_not_found`, as an unknown id is). */
export const tierPlanIdOf = (actor: Principal, given: string, argument = "tierPlanIds") =>
  Effect.flatMap(TierPlanService, (plans) =>
    Effect.catchTag(
      resolveId("tier plan", argument, given, collectAll((cursor) => plans.list(actor, { limit: pageSize.max, cursor }))),
      "NotFound",
      (miss) => Effect.fail(new TierNotFound({ message: miss.message }))
    )
  )

/** The user group id an argument names (`not_found` when nothing matches, as a path id is). */
export const groupIdOf = (actor: Principal, given: string, argument = "groupId") =>
  Effect.flatMap(GroupService, (groups) =>
    resolveId("user group", argument, given, collectAll((cursor) => groups.list(actor, { limit: pageSize.max, cursor })))
  )

/** A group id of a request body: an unmatched name is `group_not_found`, as an unknown id is. */
export const bodyGroupIdOf = (actor: Principal, given: string, argument = "groupId") =>
  Effect.catchTag(groupIdOf(actor, given, argument), "NotFound", (miss) => Effect.fail(new GroupNotFound({ message: miss.message })))

/** The Portal id an argument names. */
export const portalIdOf = (actor: Principal, given: string, argument = "portalId") =>
  Effect.flatMap(PortalService, (portals) =>
    resolveId("Portal", argument, given, collectAll((cursor) => portals.list(actor, { limit: pageSize.max, cursor })))
  )

/** The end user id an argument names: an id passes through; an email is looked up exactly (case-insensitively). */
export const endUserIdOf = (actor: Principal, given: string, argument = "endUserId") => {
  if (uuidPattern.test(given)) return Effect.succeed(given)
  return Effect.flatMap(EndUserService, (endUsers) =>
    Effect.flatMap(endUsers.list(actor, { email: given, limit: 1 }), (page) =>
      page.items[0] === undefined
        ? Effect.fail(new NotFound({ message: `${argument}: no end user '${given}' in this organization.` }))
        : Effect.succeed(page.items[0].id)
    )
  )
}

/**
 * The subscription of an end user an argument names: its id, or the id or exact name of its plan
 * (another id passes through, for the service to answer `not_found`).
 */
export const subscriptionIdOf = (actor: Principal, endUserId: string, given: string) =>
  Effect.flatMap(EndUserService, (endUsers) =>
    Effect.flatMap(endUsers.get(actor, endUserId), (endUser) => {
      const held = endUser.subscriptions.find((s) => s.id === given || s.tierPlanId === given || s.tierPlanName === given)
      if (held !== undefined) return Effect.succeed(held.id)
      return uuidPattern.test(given)
        ? Effect.succeed(given)
        : Effect.fail(new NotFound({ message: `subscriptionId: the end user holds no subscription or plan '${given}'.` }))
    })
  )
