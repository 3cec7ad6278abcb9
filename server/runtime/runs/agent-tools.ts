/**
 * The tools an Agent's own `flowIds` offer its model, beyond its Knowledgebases. Runs of Flows sit
 * above Agent runs (a Flow step may ask an Agent), so the Flow runs feature registers how to build
 * these tools here when it starts, and Agent turns ask for them without importing it.
 */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import type { ModelTool } from "../model.js"

/** Builds the tools of an Agent's `flowIds` for `actor`. */
export type AgentFlowToolsBuilder = (actor: Principal, flowIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ModelTool>>

/** The registered builder of an Agent's Flow tools; none registered offers none. */
export class AgentFlowTools extends Effect.Service<AgentFlowTools>()("svc/AgentFlowTools", {
  sync: () => {
    let builder: AgentFlowToolsBuilder = () => Effect.succeed([])
    return {
      /** Sets how Flow tools are built (the Flow runs feature, once). */
      register: (next: AgentFlowToolsBuilder) => Effect.sync(() => void (builder = next)),
      /** The tools of `flowIds` for `actor`. */
      toolsFor: (actor: Principal, flowIds: ReadonlyArray<string>) =>
        flowIds.length === 0 ? Effect.succeed([] as ReadonlyArray<ModelTool>) : Effect.suspend(() => builder(actor, flowIds))
    }
  }
}) {}
