/** The `flows` feature: what an organization builds and runs as Flows. */
import { defineFeature } from "../../platform/feature.js"
import { FlowsContract } from "./api.js"
import { FlowsHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { flowAuthoringTools } from "../mcp.js"

/** Flows. */
export const flowsFeature = defineFeature({
  name: "flows",
  contract: FlowsContract,
  http: FlowsHttpLive,
  /** Its MCP tools. */
  mcp: [familyTools("authoring", flowAuthoringTools)]
})
