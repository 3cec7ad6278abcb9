/** The `userGroups` feature: user groups, their members and their grants. */
import { Layer } from "effect"
import { defineFeature } from "../../platform/feature.js"
import { UserGroupsContract } from "./api.js"
import { GroupGrants } from "./grants.js"
import { UserGroupsHttpLive } from "./http.js"
import { GroupMembers } from "./members.js"
import { GroupService } from "./service.js"
import { SuiteService } from "../suites/service.js"
import { AccessService } from "../access/service.js"

/** User groups, with the Suites their grants may name (made by administration) and the access they give. */
export const userGroupsFeature = defineFeature({
  name: "userGroups",
  contract: UserGroupsContract,
  http: UserGroupsHttpLive,
  services: Layer.mergeAll(GroupService.Default, GroupMembers.Default, GroupGrants.Default, SuiteService.Default, AccessService.Default)
})
