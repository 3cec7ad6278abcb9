/** The `apps` feature: Apps combining Agents and Flows, with their services. */
import { defineFeature } from "../../platform/feature.js"
import { AppsContract } from "./api.js"
import { AppsHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { appAuthoringTools } from "../mcp.js"

/** Apps. */
export const appsFeature = defineFeature({
  name: "apps",
  contract: AppsContract,
  http: AppsHttpLive,
  /** Its MCP tools. */
  mcp: [familyTools("authoring", appAuthoringTools)]
})
