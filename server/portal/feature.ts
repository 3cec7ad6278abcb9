/** The `portalPages` feature: sign-in and chat at the Portal's web pages (served in front of the API by `http.ts`; no REST endpoints). */
import { Layer } from "effect"
import { defineFeature } from "../platform/feature.js"
import { featureContract } from "../http/contract.js"

/** The Portal's web pages. */
export const portalPagesFeature = defineFeature({
  name: "portalPages",
  contract: featureContract(),
  http: Layer.empty
})
