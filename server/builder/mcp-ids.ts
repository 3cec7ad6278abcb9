/**
 * Id arguments of the run and authoring tools: an Agent, Flow or App by id or exact name, over the
 * builder services' own lists (published items for runs, drafts too for authoring).
 */
import { Effect } from "effect"
import type { Principal } from "../identity/domain.js"
import { pageSize } from "../platform/pagination.js"
import { AgentService } from "./agents/service.js"
import { AppService } from "./apps/service.js"
import { FlowService } from "./flows/service.js"
import { collectAll, resolveId } from "../mcp-door/resolve.js"

/** Which items a name is looked up among. */
export type ItemSet = "published" | "drafts"

const request = (set: ItemSet, cursor: string | undefined) => ({ includeDrafts: set === "drafts", updatedSince: null, limit: pageSize.max, cursor })

/** The Agent id an argument names. */
export const agentIdOf = (actor: Principal, given: string, set: ItemSet, argument = "agentId") =>
  Effect.flatMap(AgentService, (agents) =>
    resolveId("Agent", argument, given, collectAll((cursor) => agents.list(actor, request(set, cursor))))
  )

/** The Flow id an argument names. */
export const flowIdOf = (actor: Principal, given: string, set: ItemSet, argument = "flowId") =>
  Effect.flatMap(FlowService, (flows) =>
    resolveId("Flow", argument, given, collectAll((cursor) => flows.list(actor, request(set, cursor))))
  )

/** The App id an argument names. */
export const appIdOf = (actor: Principal, given: string, set: ItemSet, argument = "appId") =>
  Effect.flatMap(AppService, (apps) =>
    resolveId("App", argument, given, collectAll((cursor) => apps.list(actor, request(set, cursor))))
  )

/** The id of a draft Agent, Flow or App named by `given`. */
export const draftIdOf = (principal: Principal, kind: "agent" | "flow" | "app", given: string) =>
  kind === "agent" ? agentIdOf(principal, given, "drafts", "id") : kind === "flow" ? flowIdOf(principal, given, "drafts", "id") : appIdOf(principal, given, "drafts", "id")
