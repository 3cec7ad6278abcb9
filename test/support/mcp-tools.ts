/** Every MCP tool as the server declares it, per-item tools included (built from sample items). */
import { Effect } from "effect"
import type { Flow } from "../../server/builder/flows/domain.js"
import { toolFamilies } from "../../server/mcp/registry.js"
import type { CallContext, McpTool } from "../../server/mcp-door/tool.js"
import { coreTools } from "../../server/mcp/core-tools.js"
import { agentItemTool, appItemTool, flowItemTool } from "../../server/runtime/mcp/items.js"

/** A published Flow as the per-item tools read it: with questions, or conversational. */
export const sampleFlow = (conversational: boolean): Flow =>
  ({
    id: "00000000-0000-4000-8000-000000000001",
    name: "Greeter",
    description: "",
    conversational,
    inputs: [],
    inputsSchema: conversational
      ? { type: "object", properties: {}, required: [] }
      : { type: "object", properties: { company_name: { type: "string" }, size: { type: "string", enum: ["small", "large"] } }, required: ["company_name"] },
    version: 1,
    publishedAt: "2026-01-01T00:00:00.000Z"
  }) as unknown as Flow

/** Every tool: the core tools, every fixed family's, and one of each per-item kind. */
export const everyTool = async (): Promise<ReadonlyArray<McpTool>> => {
  const fixed = await Effect.runPromise(
    Effect.forEach(
      toolFamilies.filter((family) => !family.dynamic),
      (family) => family.tools({} as CallContext) as Effect.Effect<ReadonlyArray<McpTool>>
    )
  )
  const item = { id: "00000000-0000-4000-8000-000000000002", name: "Helper", description: "Helps." }
  return [
    ...coreTools,
    ...fixed.flat(),
    agentItemTool(item, "agent_helper"),
    appItemTool(item, "app_helper"),
    flowItemTool(sampleFlow(false), "flow_greeter"),
    flowItemTool(sampleFlow(true), "flow_chat")
  ]
}
