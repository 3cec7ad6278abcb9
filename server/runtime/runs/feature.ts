/** The `runs` feature: Agent conversation turns, executions and conversation reads. */
import { defineFeature } from "../../platform/feature.js"
import { RunsContract } from "./api.js"
import { RunsHttpLive } from "./http.js"
import { RunService } from "./service.js"

/** Runs. */
export const runsFeature = defineFeature({
  name: "runs",
  contract: RunsContract,
  http: RunsHttpLive,
  services: RunService.Default
})
