/** Who may delete an Agent, Flow or App: the Admin role, which is not a scope. */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { InsufficientRole } from "../../platform/errors.js"

/**
 * Passes for an organization key (the endpoint already required its `:write` scope) and for a
 * personal key of an Admin member; anyone else gets 403 `insufficient_role`.
 */
export const requireAdmin = (actor: Principal, what: string): Effect.Effect<void, InsufficientRole> =>
  actor.key.kind === "organization" || actor.member?.role === "admin"
    ? Effect.void
    : Effect.fail(new InsufficientRole({ message: `Deleting ${what} needs the Admin role (an organization key, or a personal key of an Admin).` }))
