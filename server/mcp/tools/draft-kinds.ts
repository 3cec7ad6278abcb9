/** The kinds of authored item (Agent, Flow, App): naming a draft, and who may author each. */
import * as z from "zod/v4"
import type { Principal } from "../../platform/accounts/domain.js"
import { gateError as gateErrorOf, scopeRefusal } from "../../platform/http/authentication.js"
import { agentIdOf, appIdOf, flowIdOf } from "./builder-ids.js"

/** The `kind` argument of draft tools. */
export const kindInput = z.enum(["agent", "flow", "app"]).describe("What to act on.")

/** The id of a draft Agent, Flow or App named by `given`. */
export const draftIdOf = (principal: Principal, kind: "agent" | "flow" | "app", given: string) =>
  kind === "agent" ? agentIdOf(principal, given, "drafts", "id") : kind === "flow" ? flowIdOf(principal, given, "drafts", "id") : appIdOf(principal, given, "drafts", "id")

/** The `:write` scope each kind needs. */
export const kindScope = { agent: "agents:write", flow: "flows:write", app: "apps:write" } as const

/** Why `principal` may not author `kind` (its `:write` scope, and the `apps` gate for Apps). */
export const kindRefusal = (principal: Principal, kind: "agent" | "flow" | "app") => {
  if (kind === "app" && !principal.organization.gates.has("apps")) return gateErrorOf("apps")
  return scopeRefusal(principal, [kindScope[kind]])
}
