/**
 * The runs feature's MCP tools: the `run` family (published Agents, Apps and Flows: list, run, read
 * executions), the `authoring` family (whose draft runs and checks are runs too) and the `agents`
 * family (one tool per published item).
 */
import { familyTools } from "../../mcp-door/family-tools.js"
import { authoringTools } from "./authoring.js"
import { itemTools } from "./items.js"
import { runTools } from "./runs.js"

/** `list_agents`, `run_agent`, `list_flows`, `run_flow`, `get_execution`; the authoring tools; the per-item tools. */
export const runtimeTools = [familyTools("run", runTools), familyTools("authoring", authoringTools), itemTools] as const
