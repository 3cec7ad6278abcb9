/**
 * Tool families, chosen with `?tools=` on the address (spec: MCP server): `run`, `authoring`,
 * `knowledge`, `provisioning`, `agents`. Without `tools` every family is offered. `whoami` and
 * `search_docs` belong to no family and are always offered.
 */
import type { Effect } from "effect"
import { InvalidRequest } from "../platform/errors.js"
import { type FamilyName, familyNames } from "../mcp-door/family-names.js"
import type { CallContext, McpTool } from "../mcp-door/tool.js"

export { familyNames, type FamilyName } from "../mcp-door/family-names.js"

/** One family, assembled from the features' `mcp` parts (`registry.ts`): the tools it offers a caller (before the caller's scopes filter them). */
export interface ToolFamily<R = any> {
  readonly name: FamilyName
  readonly description: string
  /** Whether its tools follow the data (published items): then the list is rebuilt after every commit. */
  readonly dynamic?: boolean | undefined
  readonly tools: (call: CallContext) => Effect.Effect<ReadonlyArray<McpTool>, never, R>
}

/** The families a `tools` query value selects (absent or empty: all); unknown names are refused. */
export const parseFamilies = (value: string | null): ReadonlySet<FamilyName> | InvalidRequest => {
  if (value === null || value.trim() === "") return new Set(familyNames)
  const named = value.split(",").map((part) => part.trim()).filter((part) => part !== "")
  const unknown = named.filter((part) => !(familyNames as ReadonlyArray<string>).includes(part))
  if (unknown.length > 0) {
    return new InvalidRequest({ message: `tools: unknown tool families ${unknown.map((n) => `'${n}'`).join(", ")}; known: ${familyNames.join(", ")}.` })
  }
  return new Set(named as Array<FamilyName>)
}
