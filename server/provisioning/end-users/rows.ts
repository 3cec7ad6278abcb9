/** Rows of `end_users` and what hangs off them, as SQL answers them. */

/** An `end_users` row. */
export interface EndUserRow {
  readonly id: string
  readonly organization_id: string
  readonly email: string
  readonly email_key: string
  readonly full_name: string | null
  readonly state: "active" | "pending" | "revoked" | "deleted"
  readonly created_at: string
  readonly updated_at: string
  readonly revoked_at: string | null
  readonly deleted_at: string | null
}

/** A subscription row with its plan's name. */
export interface SubscriptionRow {
  readonly id: string
  readonly organization_id: string
  readonly end_user_id: string
  readonly tier_plan_id: string
  readonly tier_plan_name: string
  readonly status: string
  readonly credit_allowance: number
  readonly credits_used: number
  readonly bonus_credits: number
  readonly credits_reset_at: string
  readonly created_at: string
}

/** A per-user grant row. */
export interface GrantRow {
  readonly id: string
  readonly organization_id: string
  readonly end_user_id: string
  readonly target_kind: "app" | "suite"
  readonly target_id: string
  readonly deployment_id: string | null
  readonly created_at: string
}
