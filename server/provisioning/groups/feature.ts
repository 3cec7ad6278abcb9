/** The `userGroups` feature: user groups, their members and their grants. */
import { defineFeature } from "../../platform/feature.js"
import { UserGroupsContract } from "./api.js"
import { UserGroupsHttpLive } from "./http.js"

/** User groups, with the Suites their grants may name (made by administration) and the access they give. */
export const userGroupsFeature = defineFeature({
  name: "userGroups",
  contract: UserGroupsContract,
  http: UserGroupsHttpLive
})
