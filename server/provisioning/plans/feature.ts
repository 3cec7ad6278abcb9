/** The `tierPlans` feature: the plan catalog an end user's subscriptions come from. */
import { defineFeature } from "../../platform/feature.js"
import { TierPlansContract } from "./api.js"
import { TierPlansHttpLive } from "./http.js"

/** Tier plans. */
export const tierPlansFeature = defineFeature({
  name: "tierPlans",
  contract: TierPlansContract,
  http: TierPlansHttpLive
})
