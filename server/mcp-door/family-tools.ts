/**
 * A feature's MCP tools, as its `mcp` part in `defineFeature` declares them: each list tagged with the
 * tool family it joins (`?tools=`). MCP's registry (`server/mcp/registry.ts`) assembles the families
 * from the feature list, as the API joins the features' contracts: a new feature is one entry there.
 */
import { Effect } from "effect"
import type { FamilyName } from "./family-names.js"
import type { CallContext, McpTool } from "./tool.js"

/** Tools of one family a feature serves: fixed, or built for each caller (per-item tools). */
export interface FamilyTools<R = any> {
  readonly family: FamilyName
  /** Whether its tools follow the data (published items): then the list is rebuilt after every commit. */
  readonly dynamic?: boolean | undefined
  /** Its tools for a caller (before the caller's scopes filter them). */
  readonly tools: (call: CallContext) => Effect.Effect<ReadonlyArray<McpTool>, never, R>
}

/** Fixed tools of `family`. */
export const familyTools = (family: FamilyName, tools: ReadonlyArray<McpTool>): FamilyTools<never> => ({
  family,
  tools: () => Effect.succeed(tools)
})
