/** Portal admissions: which user groups a Portal lets in. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** A group admitted at a Portal. */
export const Admission = Schema.Struct({
  groupId: Uuid,
  groupName: Schema.String,
  planId: Schema.NullOr(Uuid).annotations({ description: "Set when the group is a plan's group: the Portal admits the plan's holders." }),
  createdAt: DateTime.annotations({ description: "When the group was admitted." })
}).annotations({ identifier: "PortalAdmission" })
export type Admission = typeof Admission.Type

/** Body of `POST /portals/{id}/admissions`. */
export const AdmitGroup = Schema.Struct({
  groupId: Uuid.annotations({ description: "A user group of the organization (a plan's group included); unknown: 422 `group_not_found`." })
}).annotations({
  identifier: "AdmitGroup",
  parseOptions: { onExcessProperty: "error", errors: "all" },
  examples: [{ groupId: "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d" }]
})
export type AdmitGroup = typeof AdmitGroup.Type

/** The answer of admitting a group (`created` false when it was admitted already). */
export interface Admitted {
  readonly ok: true
  readonly created: boolean
  readonly admission: Admission
}

/** An admission row joined with its group. */
export interface AdmissionRow {
  readonly group_id: string
  readonly group_name: string
  readonly plan_id: string | null
  readonly created_at: string
}

/** An admission as the contract shows it. */
export const toAdmission = (row: AdmissionRow): Admission => ({
  groupId: row.group_id,
  groupName: row.group_name,
  planId: row.plan_id,
  createdAt: row.created_at
})
