/** The `appRuns` feature: App conversation turns (published and draft) and transactions. */
import { defineFeature } from "../../platform/feature.js"
import { AppRunsContract } from "./api.js"
import { AppRunsHttpLive } from "./http.js"

/** App runs. */
export const appRunsFeature = defineFeature({
  name: "appRuns",
  contract: AppRunsContract,
  http: AppRunsHttpLive
})
