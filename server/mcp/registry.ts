/**
 * The registry of tool families and the tool list of one caller: the core tools, then each selected
 * family's tools the caller's current scopes admit (so a role change shows on the next request).
 * A new family is one file under `tools/` and one line here.
 */
import { Effect } from "effect"
import { admits } from "./admits.js"
import type { ToolFamily } from "./families.js"
import type { CallContext, McpTool } from "./tool.js"
import { coreTools } from "./tools/core.js"
import { agentsFamily } from "./tools/items.js"
import { authoringFamily } from "./tools/authoring.js"
import { knowledgeFamily } from "./tools/knowledge.js"
import { runFamily } from "./tools/run-family.js"
import { provisioningFamily } from "./tools/provisioning.js"

/** Every family, in the order tools are listed. */
export const toolFamilies: ReadonlyArray<ToolFamily> = [runFamily, authoringFamily, knowledgeFamily, provisioningFamily, agentsFamily]


/** The tools offered to `call`, by name. */
export const toolsFor = (call: CallContext) =>
  Effect.map(
    Effect.forEach(toolFamilies.filter((family) => call.families.has(family.name)), (family) => family.tools(call)),
    (lists) => {
      const offered = new Map<string, McpTool>()
      for (const candidate of [...coreTools, ...lists.flat()]) if (admits(call.principal, candidate)) offered.set(candidate.name, candidate)
      return offered
    }
  )
