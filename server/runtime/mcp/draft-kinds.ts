/** The kinds of authored item (Agent, Flow, App): naming a draft, and who may author each. */
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { gateError as gateErrorOf, scopeRefusal } from "../../http/authentication.js"
import { AgentsApi } from "../../builder/agents/api.js"
import { AppsApi } from "../../builder/apps/api.js"
import { FlowsApi } from "../../builder/flows/api.js"
import { AppRunsApi } from "../app-runs/api.js"
import { FlowRunsApi } from "../flow-runs/api.js"
import { RunsApi } from "../runs/api.js"
import { operation } from "../../mcp-door/operation.js"
import { agentIdOf, appIdOf, flowIdOf } from "./builder-ids.js"

/** The `kind` argument of draft tools. */
export const kindInput = z.enum(["agent", "flow", "app"]).describe("What to act on.")

/** Why `kind` is the tool's own: one tool for the three kinds, where REST has a path per kind. */
export const kindReason = "one tool acts on the three kinds, where REST has one path per kind"

/** The id of a draft Agent, Flow or App named by `given`. */
export const draftIdOf = (principal: Principal, kind: "agent" | "flow" | "app", given: string) =>
  kind === "agent" ? agentIdOf(principal, given, "drafts", "id") : kind === "flow" ? flowIdOf(principal, given, "drafts", "id") : appIdOf(principal, given, "drafts", "id")

/** The draft run of each kind (`POST /{kind}s/{id}/draft/run`): its scope and gate are who may author that kind. */
export const draftRunOperation = {
  agent: operation(RunsApi, "agentDraftRun"),
  flow: operation(FlowRunsApi, "runFlowDraft"),
  app: operation(AppRunsApi, "appDraftRun")
} as const

/** Publishing each kind (`POST /{kind}s/{id}/publish`). */
export const publishOperation = {
  agent: operation(AgentsApi, "publish"),
  flow: operation(FlowsApi, "publish"),
  app: operation(AppsApi, "publish")
} as const

/** Why `principal` may not author `kind`: the gate, then the scope, of that kind's draft run. */
export const kindRefusal = (principal: Principal, kind: "agent" | "flow" | "app") => {
  const { gate, scopes } = draftRunOperation[kind]
  if (gate !== undefined && !principal.organization.gates.has(gate)) return gateErrorOf(gate)
  return scopeRefusal(principal, scopes)
}
