/** The kinds of authored item (Agent, Flow, App) the draft-run tools take, and who may author each. */
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { gateError as gateErrorOf, scopeRefusal } from "../../http/authentication.js"
import { AppRunsApi } from "../app-runs/api.js"
import { FlowRunsApi } from "../flow-runs/api.js"
import { RunsApi } from "../runs/api.js"
import { operation } from "../../mcp-door/operation.js"

/** The `kind` argument of draft tools. */
export const kindInput = z.enum(["agent", "flow", "app"]).describe("What to act on.")

/** Why `kind` is the tool's own: one tool for the three kinds, where REST has a path per kind. */
export const kindReason = "one tool acts on the three kinds, where REST has one path per kind"

/** The draft run of each kind (`POST /{kind}s/{id}/draft/run`): its scope and gate are who may author that kind. */
export const draftRunOperation = {
  agent: operation(RunsApi, "agentDraftRun"),
  flow: operation(FlowRunsApi, "runFlowDraft"),
  app: operation(AppRunsApi, "appDraftRun")
} as const

/** Why `principal` may not author `kind`: the gate, then the scope, of that kind's draft run. */
export const kindRefusal = (principal: Principal, kind: "agent" | "flow" | "app") => {
  const { gate, scopes } = draftRunOperation[kind]
  if (gate !== undefined && !principal.organization.gates.has(gate)) return gateErrorOf(gate)
  return scopeRefusal(principal, scopes)
}
