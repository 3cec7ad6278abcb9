/** The `run` family: list and run published Agents, Apps and Flows; read executions. */
import { staticFamily } from "../families.js"
import { runTools } from "./runs.js"

/** `list_agents`, `run_agent`, `list_flows`, `run_flow`, `get_execution`. */
export const runFamily = staticFamily("run", "Published Agents, Apps and Flows: list, run, read executions.", runTools)
