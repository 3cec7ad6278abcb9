/** The `portalAdmissions` feature: which user groups each Portal admits. */
import { defineFeature } from "../../platform/feature.js"
import { PortalAdmissionsContract } from "./api.js"
import { PortalAdmissionsHttpLive } from "./http.js"

/** Portal admissions. */
export const portalAdmissionsFeature = defineFeature({
  name: "portalAdmissions",
  contract: PortalAdmissionsContract,
  http: PortalAdmissionsHttpLive
})
