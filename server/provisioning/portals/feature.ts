/** The `portals` feature: the organization's Portals (admissions are their own feature). */
import { defineFeature } from "../../platform/feature.js"
import { PortalsContract } from "./api.js"
import { PortalsHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { portalTools } from "./mcp.js"

/** Portals. */
export const portalsFeature = defineFeature({
  name: "portals",
  contract: PortalsContract,
  http: PortalsHttpLive,
  /** Its MCP tools. */
  mcp: [familyTools("provisioning", portalTools)]
})
