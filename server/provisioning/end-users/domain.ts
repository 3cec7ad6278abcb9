/** End users as provisioning keeps them: accounts keyed on a normalised email, their subscriptions and grants. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** Strict request bodies: unknown properties refused, every problem named. */
const strictBody = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

/** Account states: `pending` (pre-provisioned by a group invite), `active`, `revoked`, `deleted` (never listed). */
export const EndUserState = Schema.Literal("active", "pending", "revoked")
export type EndUserState = typeof EndUserState.Type

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** The shortest address `emailPattern` takes (`a@b.c`): the JSON Schema's lower bound, so OpenAPI and MCP show it. */
const emailMinLength = 5

/** An email address, trimmed; the account is keyed on its lower-case form. */
export const Email = Schema.Trim.pipe(
  Schema.maxLength(254),
  Schema.filter((text) => emailPattern.test(text))
).annotations({
  message: () => "email must be an email address (name@domain)",
  jsonSchema: { type: "string", format: "email", minLength: emailMinLength, maxLength: 254, description: "Trimmed; compared case-insensitively." }
})

/** The key an email is compared on: lower case. */
export const emailKey = (email: string): string => email.trim().toLowerCase()

const FullName = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  message: () => "fullName must be 1 to 200 characters",
  jsonSchema: { type: "string", minLength: 1, maxLength: 200 }
})

/** Ids in a body: UUIDs, at most 50, repeats ignored. */
const Ids = (noun: string) =>
  Schema.Array(Uuid).pipe(Schema.maxItems(50)).annotations({ description: `Ids of ${noun} of the organization (at most 50).` })

/** A deprecated per-user grant as `POST /end-users` takes it. */
export const PerUserGrantInput = Schema.Struct({
  targetKind: Schema.Literal("app", "suite").annotations({ description: "`app` (an App, Flow or Agent) or `suite`." }),
  targetId: Uuid,
  deploymentId: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
}).annotations({ identifier: "PerUserGrantInput", ...strictBody })
export type PerUserGrantInput = typeof PerUserGrantInput.Type

/** Body of `POST /end-users`. */
export const ProvisionEndUser = Schema.Struct({
  email: Email,
  fullName: Schema.optional(FullName),
  tierPlanIds: Schema.optional(Ids("tier plans; each becomes its own subscription")),
  groupIds: Schema.optional(Ids("user groups to join (not plan groups)")),
  sendEmail: Schema.optional(Schema.Boolean.annotations({ description: "Email a welcome message (default false)." })),
  grants: Schema.optional(
    Schema.Array(PerUserGrantInput).pipe(Schema.maxItems(50)).annotations({
      description: "Deprecated per-user grants; refused with `grants_unsupported` in organizations on group-based access."
    })
  )
}).annotations({
  identifier: "ProvisionEndUser",
  ...strictBody,
  examples: [{ email: "ada@example.com", fullName: "Ada Lovelace", tierPlanIds: ["3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11"] }]
})
export type ProvisionEndUser = typeof ProvisionEndUser.Type

/** An end user's identity (spec: Resources/End user). */
export const EndUser = Schema.Struct({
  id: Uuid,
  email: Schema.String,
  fullName: Schema.NullOr(Schema.String),
  createdAt: DateTime
}).annotations({ identifier: "EndUser" })
export type EndUser = typeof EndUser.Type

/** Subscription statuses: `active` (granted through the API), `paid` (live with a payment processor). */
export const SubscriptionStatus = Schema.Literal("active", "paid")

/** A subscription: one plan held, with its own credit pool (spec: Resources/Subscription, plus the pool's bonus). */
export const Subscription = Schema.Struct({
  id: Uuid,
  tierPlanId: Uuid,
  tierPlanName: Schema.String,
  status: SubscriptionStatus,
  creditAllowance: Schema.Int,
  creditsUsed: Schema.Int,
  bonusCredits: Schema.Int.annotations({ description: "Spent before the allowance." }),
  creditsRemaining: Schema.Int.annotations({ description: "`bonusCredits` plus what is left of the allowance; never below zero." }),
  creditsResetAt: DateTime
}).annotations({ identifier: "Subscription" })
export type Subscription = typeof Subscription.Type

const provisionedFields = {
  endUser: EndUser,
  subscriptions: Schema.Array(Subscription).annotations({ description: "Every subscription the end user holds now." }),
  groupsJoined: Schema.Array(Uuid).annotations({ description: "The `groupIds` of the request, each a direct membership now." }),
  grantsCreated: Schema.Int.annotations({ description: "Per-user grants new with this request (deprecated)." })
}

/** The answer of `POST /end-users` that created the account (201). */
export const EndUserCreated = Schema.Struct({ ...provisionedFields, created: Schema.Literal(true) }).annotations({
  identifier: "EndUserCreated"
})
/** The answer of `POST /end-users` that updated an existing account in place (200). */
export const EndUserUpdated = Schema.Struct({ ...provisionedFields, created: Schema.Literal(false) }).annotations({
  identifier: "EndUserUpdated"
})
/** What `POST /end-users` answers. */
export type Provisioned = typeof EndUserCreated.Type | typeof EndUserUpdated.Type

/** An end user as listed. */
export const EndUserListItem = Schema.Struct({
  id: Uuid,
  email: Schema.String,
  fullName: Schema.NullOr(Schema.String),
  state: EndUserState,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "EndUserListItem" })
export type EndUserListItem = typeof EndUserListItem.Type

/** An end user as read by id: identity, state, subscriptions with credit usage, groups joined, per-user grants. */
export const EndUserDetail = Schema.Struct({
  ...EndUserListItem.fields,
  subscriptions: Schema.Array(Subscription),
  groupIds: Schema.Array(Uuid).annotations({ description: "Groups joined directly (plan groups come with `subscriptions`)." }),
  grantIds: Schema.Array(Uuid).annotations({ description: "Deprecated per-user grants." })
}).annotations({ identifier: "EndUserDetail" })
export type EndUserDetail = typeof EndUserDetail.Type

/** The most bonus credits one adjustment adds or removes. */
const maxBonusAdjustment = 1_000_000_000

/** Body of `POST /end-users/{id}/subscriptions/{subscriptionId}/bonus-credits`. */
export const BonusCredits = Schema.Struct({
  amount: Schema.Int.pipe(Schema.between(-maxBonusAdjustment, maxBonusAdjustment), Schema.filter((n) => n !== 0)).annotations({
    message: () => "amount must be a non-zero whole number (negative removes bonus credits)",
    jsonSchema: {
      type: "integer",
      minimum: -maxBonusAdjustment,
      maximum: maxBonusAdjustment,
      not: { const: 0 },
      description: "Credits to add; negative removes bonus credits (never below zero)."
    }
  }),
  reason: Schema.optional(Schema.String.pipe(Schema.maxLength(500)))
}).annotations({ identifier: "BonusCredits", ...strictBody })
export type BonusCredits = typeof BonusCredits.Type

/**
 * The `Deprecation` header (RFC 9745: `@` and the unix time the feature was deprecated) on answers
 * about per-user grants: 2026-01-01T00:00:00Z.
 */
export const perUserGrantsDeprecation = "@1767225600"
