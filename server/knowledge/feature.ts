/** The `knowledgebases` feature: Knowledgebases, the changes feed, search, activity, memories and review. */
import { Layer } from "effect"
import { defineFeature } from "../platform/feature.js"
import { ActivityLog } from "./activity/service.js"
import { KnowledgebasesContract } from "./api.js"
import { ChangeFeed } from "./changes/service.js"
import { ChangeRepo } from "./changes/repo.js"
import { KnowledgeFastLane, KnowledgeHttpLive } from "./http.js"
import { MemoryService } from "./memories/service.js"
import { ReviewService } from "./review/service.js"
import { SearchService } from "./search/service.js"
import { KnowledgebaseService } from "./service.js"

/** Knowledgebases and the services every Knowledgebase family shares. */
export const knowledgebasesFeature = defineFeature({
  name: "knowledgebases",
  contract: KnowledgebasesContract,
  http: KnowledgeHttpLive,
  fastLane: KnowledgeFastLane,
  services: Layer.mergeAll(
    KnowledgebaseService.Default,
    ChangeFeed.Default,
    ChangeRepo.Default,
    SearchService.Default,
    ActivityLog.Default,
    MemoryService.Default,
    ReviewService.Default
  )
})
