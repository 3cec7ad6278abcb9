/** What the reliability suite and its server processes tell each other. */
import type { Ready } from "../protocol.js"

/** The two organizations every part works with. */
export const soakOrganizations = ["soak-a", "soak-b"] as const

/** One prepared organization (Agency plan, credits for every run). */
export interface SoakOrganization {
  readonly id: string
  readonly slug: string
  /** An all-scopes organization key. */
  readonly orgKey: string
  /** An all-scopes personal key of an admin member. */
  readonly personalKey: string
  readonly tierPlanId: string
  readonly planGroupId: string
  readonly portalId: string
}

/** The soak launcher's ready line: the organizations on a fresh start, null on a restart. */
export interface SoakReady extends Ready {
  readonly organizations: { readonly a: SoakOrganization; readonly b: SoakOrganization } | null
}
