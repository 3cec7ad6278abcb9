/** The `pages` feature: pages and folders, their revisions and review. */
import { defineFeature } from "../../platform/feature.js"
import { PagesContract } from "./api.js"
import { PagesHttpLive } from "./http.js"

/** Pages and folders of Knowledgebases. */
export const pagesFeature = defineFeature({
  name: "pages",
  contract: PagesContract,
  http: PagesHttpLive
})
