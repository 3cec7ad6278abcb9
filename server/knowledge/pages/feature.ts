/** The `pages` feature: pages and folders, their revisions and review. */
import { defineFeature } from "../../platform/feature.js"
import { PagesContract } from "./api.js"
import { PagesHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { pageTools } from "./mcp.js"

/** Pages and folders of Knowledgebases. */
export const pagesFeature = defineFeature({
  name: "pages",
  contract: PagesContract,
  http: PagesHttpLive,
  /** Its MCP tools. */
  mcp: [familyTools("knowledge", pageTools)]
})
