/** Tier plans: the organization's catalog of plans an end user may hold, each owning its plan group. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** A tier plan as `GET /tier-plans` lists it. */
export const TierPlan = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  creditAllowance: Schema.Int.annotations({ description: "Credits each subscription to the plan gets per period." }),
  groupId: Uuid.annotations({ description: "The plan group: holding the plan is membership of it." }),
  archived: Schema.Boolean.annotations({ description: "Archived plans stay on existing subscriptions; new provisioning answers `tier_not_found`." }),
  createdAt: DateTime
}).annotations({ identifier: "TierPlan" })
export type TierPlan = typeof TierPlan.Type

/** What `svc plans create` takes. */
export interface NewTierPlan {
  readonly name: string
  readonly creditAllowance: number
}

/** A plan row as provisioning reads it. */
export interface TierPlanRow {
  readonly id: string
  readonly organization_id: string
  readonly name: string
  readonly credit_allowance: number
  readonly group_id: string
  readonly created_at: string
  readonly archived_at: string | null
}

/** A plan row as the API shows it. */
export const toTierPlan = (row: TierPlanRow): TierPlan => ({
  id: row.id,
  name: row.name,
  creditAllowance: row.credit_allowance,
  groupId: row.group_id,
  archived: row.archived_at !== null,
  createdAt: row.created_at
})
