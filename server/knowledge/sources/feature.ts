/** The `sources` feature: uploaded and fetched documents, and the worker that indexes them. */
import { Layer } from "effect"
import { defineFeature } from "../../platform/feature.js"
import { SourcesContract } from "./api.js"
import { SourcesHttpLive } from "./http.js"
import { IngestionWorkerLive } from "./ingestion.js"
import { SourceRepo } from "./repo.js"
import { IngestionSignal, SourceService } from "./service.js"

/** Sources of Knowledgebases. */
export const sourcesFeature = defineFeature({
  name: "sources",
  contract: SourcesContract,
  http: SourcesHttpLive,
  services: Layer.mergeAll(SourceService.Default, SourceRepo.Default, IngestionSignal.Default),
  workers: IngestionWorkerLive
})
