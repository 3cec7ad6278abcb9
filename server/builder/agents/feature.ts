/** The `agents` feature: what an organization builds and runs as Agents. */
import { defineFeature } from "../../platform/feature.js"
import { AgentsContract } from "./api.js"
import { AgentsHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { agentAuthoringTools } from "../mcp.js"

/** Agents. */
export const agentsFeature = defineFeature({
  name: "agents",
  contract: AgentsContract,
  http: AgentsHttpLive,
  /** Its MCP tools. */
  mcp: [familyTools("authoring", agentAuthoringTools)]
})
