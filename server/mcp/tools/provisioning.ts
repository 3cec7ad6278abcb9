/**
 * The `provisioning` family (admins: `end_users:read` / `end_users:write`): tier plans, Portals,
 * end users, user groups with their members and grants, and Portal admissions, each tool a thin
 * adapter over the provisioning services the REST handlers use. Group and admission tools need the
 * `groups` gate, as their endpoints do.
 */
import { staticFamily } from "../families.js"
import { endUserTools } from "./provisioning-end-users.js"
import { groupTools } from "./provisioning-groups.js"
import { portalTools } from "./provisioning-portals.js"

/** The provisioning family. */
export const provisioningFamily = staticFamily("provisioning", "End users, user groups, grants, plans, Portals and admissions (admins).", [
  ...portalTools,
  ...endUserTools,
  ...groupTools
])
