/** The `knowledgebases` feature: Knowledgebases, search, the changes feed, activity, memories and review. */
import { Layer } from "effect"
import { defineFeature } from "../platform/feature.js"
import { ActivityLog } from "./activity/service.js"
import { KnowledgebasesContract } from "./api.js"
import { KnowledgeHttpLive } from "./http.js"
import { MemoryService } from "./memories/service.js"
import { ReviewService } from "./review/service.js"
import { SearchService } from "./search/service.js"
import { KnowledgebaseService } from "./service.js"

/** Knowledgebases and the services every Knowledgebase family shares. */
export const knowledgebasesFeature = defineFeature({
  name: "knowledgebases",
  contract: KnowledgebasesContract,
  http: KnowledgeHttpLive,
  services: Layer.mergeAll(KnowledgebaseService.Default, SearchService.Default, ActivityLog.Default, MemoryService.Default, ReviewService.Default)
})
