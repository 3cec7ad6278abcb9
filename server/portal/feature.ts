/** The `portalPages` feature: sign-in and chat at the Portal's web pages (served in front of the API by `http.ts`; no REST endpoints). */
import { Layer } from "effect"
import { defineFeature } from "../platform/feature.js"
import { featureContract } from "../platform/http/contract.js"
import { PortalChat } from "./chat.js"
import { PortalSignInRepo } from "./repo.js"
import { PortalSignIn } from "./service.js"

/** The Portal's web pages. */
export const portalPagesFeature = defineFeature({
  name: "portalPages",
  contract: featureContract(),
  http: Layer.empty,
  services: Layer.mergeAll(PortalSignIn.Default, PortalChat.Default, PortalSignInRepo.Default)
})
