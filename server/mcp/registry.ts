/**
 * The registry of tool families and the tool list of one caller: the core tools, then each selected
 * family's tools the caller's current scopes admit (so a role change shows on the next request).
 * A new family is one file under `tools/` and one line here.
 */
import { Effect } from "effect"
import { ReadConnection } from "../platform/sql/read-connection.js"
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


/**
 * What the tool list of `call` depends on: the key, role, scopes, plan, gates and families, and,
 * when a selected family follows the data, the database's version. The same fingerprint means the
 * same list, so a connection rebuilds its list only when this changes.
 */
export const listFingerprint = (call: CallContext) =>
  Effect.map(
    toolFamilies.some((family) => family.dynamic && call.families.has(family.name)) ? Effect.map(ReadConnection, (reader) => reader.dataVersion()) : Effect.succeed(0),
    (version) => {
      const { principal } = call
      const org = principal.organization
      return JSON.stringify([principal.key.id, principal.member?.role ?? null, [...principal.scopes].sort(), org.plan, [...org.gates].sort(), [...call.families].sort(), version])
    }
  )

/**
 * The tools offered to `call`, by name, and those its scopes admit but an organization gate hides
 * (`gatedOff`): not listed, and called they answer the gate's refusal (`groups_disabled`,
 * `api_disabled`) as their REST endpoints do.
 */
export const toolsFor = (call: CallContext) =>
  Effect.map(
    Effect.forEach(toolFamilies.filter((family) => call.families.has(family.name)), (family) => family.tools(call)),
    (lists) => {
      const offered = new Map<string, McpTool>()
      const gatedOff = new Map<string, McpTool>()
      for (const candidate of [...coreTools, ...lists.flat()]) {
        if (admits(call.principal, candidate)) offered.set(candidate.name, candidate)
        else if (candidate.gate !== undefined && admits(call.principal, { scopes: candidate.scopes })) gatedOff.set(candidate.name, candidate)
      }
      return { offered, gatedOff }
    }
  )
