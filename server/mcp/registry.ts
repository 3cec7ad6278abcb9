/**
 * The registry of tool families and the tool list of one caller: the core tools, then each selected
 * family's tools the caller's current scopes admit (so a role change shows on the next request).
 * A new family is one file under `tools/` and one line here.
 */
import { Effect } from "effect"
import { scopeRefusal } from "../platform/http/authentication.js"
import type { ToolFamily } from "./families.js"
import type { CallContext, McpTool } from "./tool.js"
import { coreTools } from "./tools/core.js"
import { knowledgeFamily } from "./tools/knowledge.js"
import { provisioningFamily } from "./tools/provisioning.js"

/** Every family, in the order tools are listed. */
export const toolFamilies: ReadonlyArray<ToolFamily> = [knowledgeFamily, provisioningFamily]

/** Whether the caller's current scopes admit a tool. */
export const admits = (call: CallContext, candidate: McpTool): boolean =>
  candidate.scopes.length === 0 || scopeRefusal(call.principal, candidate.scopes) === null

/** The tools offered to `call`, by name. */
export const toolsFor = (call: CallContext) =>
  Effect.map(
    Effect.forEach(toolFamilies.filter((family) => call.families.has(family.name)), (family) => family.tools(call)),
    (lists) => {
      const offered = new Map<string, McpTool>()
      for (const candidate of [...coreTools, ...lists.flat()]) if (admits(call, candidate)) offered.set(candidate.name, candidate)
      return offered
    }
  )
