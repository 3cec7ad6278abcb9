/** The `knowledgebases` feature: Knowledgebases, the changes feed, search (with the passage vectors of hybrid search), activity, memories and review. */
import { defineFeature } from "../platform/feature.js"
import { KnowledgebasesContract } from "./api.js"
import { EmbeddingWorkerLive } from "./embeddings/worker.js"
import { KnowledgeHttpLive } from "./http.js"
import { familyTools } from "../mcp-door/family-tools.js"
import { knowledgebaseTools } from "./mcp.js"
import { memoryTools } from "./memories/mcp.js"

/** Knowledgebases and the services every Knowledgebase family shares. */
export const knowledgebasesFeature = defineFeature({
  name: "knowledgebases",
  contract: KnowledgebasesContract,
  http: KnowledgeHttpLive,
  /** Gives indexed passages their vectors while an embedding model is configured (hybrid search). */
  workers: EmbeddingWorkerLive,
  /** Its MCP tools. */
  mcp: [familyTools("knowledge", [...knowledgebaseTools, ...memoryTools])]
})
