/** The `userGroups` feature: user groups, their members and their grants. */
import { defineFeature } from "../../platform/feature.js"
import { UserGroupsContract } from "./api.js"
import { UserGroupsHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { groupTools } from "./mcp.js"

/** User groups, with the Suites their grants may name (made by administration) and the access they give. */
export const userGroupsFeature = defineFeature({
  name: "userGroups",
  contract: UserGroupsContract,
  http: UserGroupsHttpLive,
  /** Its MCP tools. */
  mcp: [familyTools("provisioning", groupTools)]
})
