/** The `flowRuns` feature: runs of Flows (published and draft). */
import { defineFeature } from "../../platform/feature.js"
import { FlowRunsContract } from "./api.js"
import { FlowRunsHttpLive } from "./http.js"

/** Flow runs. */
export const flowRunsFeature = defineFeature({
  name: "flowRuns",
  contract: FlowRunsContract,
  http: FlowRunsHttpLive
})
