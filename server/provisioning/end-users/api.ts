/** The end-user endpoints of the contract. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { featureContract } from "../../http/contract.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { IdempotencyHeaders } from "../../http/responses.js"
import { ListOf, listQuery, UpdatedSinceParam } from "../../platform/pagination.js"
import {
  BonusCredits,
  EndUserCreated,
  EndUserDetail,
  EndUserListItem,
  EndUserUpdated,
  ProvisionEndUser,
  Subscription
} from "./domain.js"

const EndUserPath = Schema.Struct({ endUserId: Schema.String })
const SubscriptionPath = Schema.Struct({ endUserId: Schema.String, subscriptionId: Schema.String })
const GrantPath = Schema.Struct({ endUserId: Schema.String, grantId: Schema.String })
const Ok = Schema.Struct({ ok: Schema.Literal(true) }).annotations({ identifier: "Ok" })

/** `/end-users` */
export class EndUsersApi extends HttpApiGroup.make("endUsers")
  .annotate(OpenApi.Description, "End users: provision, list, read, revoke, delete, and their plans and bonus credits.")
  .add(
    HttpApiEndpoint.post("provision", "/end-users")
      .setHeaders(IdempotencyHeaders)
      .setPayload(ProvisionEndUser)
      .addSuccess(EndUserCreated, { status: 201 })
      .addSuccess(EndUserUpdated)
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.GrantsUnsupported)
      .addError(ErrorResponse.Conflict)
      .addError(ErrorResponse.DeletedIdentity)
      .addError(ErrorResponse.LivePaidSubscription)
      .addError(ErrorResponse.TierNotFound)
      .addError(ErrorResponse.GroupNotFound)
      .addError(ErrorResponse.PlanGroupJoin)
      .addError(ErrorResponse.GrantTargetNotFound)
      .annotate(OpenApi.Summary, "Create or update an end user")
      .annotate(
        OpenApi.Description,
        "Creates the account of `email` (201, `created: true`) or updates it in place (200): `fullName` when given, plans and groups added, never removed. Each plan becomes its own subscription with its own credit pool. Every id is checked before anything is written, so a refusal leaves no partial account. A revoked account is restored; a deleted one is 409 `deleted_identity` forever. Emails nothing unless `sendEmail` is true. A body with the deprecated `grants` is answered with a `Deprecation` header. Takes `Idempotency-Key`."
      )
      .annotate(OpenApi.Transform, (operation) => ({ ...operation, "x-deprecated-fields": ["grants"] }))
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.get("list", "/end-users")
      .setUrlParams(
        listQuery({
          email: Schema.optional(Schema.String.annotations({ description: "Only the account of this email (compared case-insensitively)." })),
          updatedSince: UpdatedSinceParam
        })
      )
      .addSuccess(ListOf("endUsers", EndUserListItem).annotations({ identifier: "EndUserList" }))
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List end users")
      .annotate(
        OpenApi.Description,
        "Accounts oldest first, with their `state` (`active`, `pending` for identities pre-provisioned by a group invite, `revoked`); deleted accounts are never listed."
      )
      .pipe(scope("end_users:read"))
  )
  .add(
    HttpApiEndpoint.get("get", "/end-users/:endUserId")
      .setPath(EndUserPath)
      .addSuccess(Schema.Struct({ endUser: EndUserDetail }).annotations({ identifier: "EndUserResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read an end user")
      .annotate(OpenApi.Description, "Identity and state, subscriptions with credit usage, groups joined directly, per-user grant ids.")
      .pipe(scope("end_users:read"))
  )
  .add(
    HttpApiEndpoint.post("revoke", "/end-users/:endUserId/revoke")
      .setPath(EndUserPath)
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true), revoked: Schema.Literal(true) }).annotations({ identifier: "EndUserRevoked" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Revoke an end user's access")
      .annotate(OpenApi.Description, "Idempotent. Plans, groups and credits stay; a later `POST /end-users` with the email restores the account.")
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.del("delete", "/end-users/:endUserId")
      .setPath(EndUserPath)
      .addSuccess(Ok)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Delete an end user")
      .annotate(
        OpenApi.Description,
        "Subscriptions (with their credit pools), memberships and grants are removed; the identity is kept as deleted forever, so provisioning its email again is 409 `deleted_identity`."
      )
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.del("removeSubscription", "/end-users/:endUserId/subscriptions/:subscriptionId")
      .setPath(SubscriptionPath)
      .addSuccess(Ok)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Remove a plan from an end user")
      .annotate(OpenApi.Description, "Deletes the subscription and its credit pool.")
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.post("adjustBonusCredits", "/end-users/:endUserId/subscriptions/:subscriptionId/bonus-credits")
      .setPath(SubscriptionPath)
      .setPayload(BonusCredits)
      .addSuccess(
        Schema.Struct({
          ok: Schema.Literal(true),
          applied: Schema.Int.annotations({ description: "The change made: `amount`, or less when a negative amount met zero bonus credits." }),
          subscription: Subscription
        }).annotations({ identifier: "BonusCreditsAdjusted" })
      )
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "Adjust a subscription's bonus credits")
      .annotate(
        OpenApi.Description,
        "Adds `amount` bonus credits (spent before the allowance). A negative amount removes bonus credits, never more than there are: remaining credits never go below zero, and `applied` says what moved."
      )
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.del("removeGrant", "/end-users/:endUserId/grants/:grantId")
      .setPath(GrantPath)
      .addSuccess(Ok)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.GrantsUnsupported)
      .annotate(OpenApi.Summary, "Remove a per-user grant (deprecated)")
      .annotate(
        OpenApi.Description,
        "Deprecated with per-user grants: answers carry a `Deprecation` header. Refused with `grants_unsupported` in organizations on group-based access."
      )
      .annotate(OpenApi.Deprecated, true)
      .pipe(scope("end_users:write"))
  )
  .middleware(Authentication) {}

/** The `endUsers` group's slice of the contract. */
export const EndUsersContract = featureContract(EndUsersApi)
