/**
 * The `provisioning` family (admins: end users, groups, grants, admissions). It is a known family
 * with no tools yet: its tools come once the provisioning services (issue 10) land, as one tool
 * file here over those services, listed in this family.
 */
import { staticFamily } from "../families.js"

/** The provisioning family: selectable, currently without tools. */
export const provisioningFamily = staticFamily("provisioning", "End users, groups, grants and admissions (admins). No tools yet.", [])
