/** The `flowRuns` feature: runs of Flows (published and draft). */
import { defineFeature } from "../../platform/feature.js"
import { FlowRunsContract } from "./api.js"
import { FlowRunsHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { flowRunTools } from "./mcp.js"

/** Flow runs. */
export const flowRunsFeature = defineFeature({
  name: "flowRuns",
  contract: FlowRunsContract,
  http: FlowRunsHttpLive,
  /** Its MCP tools. */
  mcp: [familyTools("run", flowRunTools)]
})
