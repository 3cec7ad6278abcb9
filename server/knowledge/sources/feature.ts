/** The `sources` feature: uploaded and fetched documents, and the worker that indexes them. */
import { defineFeature } from "../../platform/feature.js"
import { SourcesContract } from "./api.js"
import { SourcesHttpLive } from "./http.js"
import { IngestionWorkerLive } from "./ingestion.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { sourceTools } from "./mcp.js"

/** Sources of Knowledgebases. */
export const sourcesFeature = defineFeature({
  name: "sources",
  contract: SourcesContract,
  http: SourcesHttpLive,
  workers: IngestionWorkerLive,
  /** Its MCP tools. */
  mcp: [familyTools("knowledge", sourceTools)]
})
