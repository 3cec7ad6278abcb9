/**
 * Expected failures of the service. Each carries a stable `code` (the contract's error code) and a
 * human `message`. They know nothing of HTTP: `server/platform/request/error-catalog.ts` is the one
 * place that gives each a status and the `{error:{code,message}}` envelope.
 */
import { Schema } from "effect"

const fields = { message: Schema.String }

/** 401: missing or malformed Authorization header. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {
  readonly code = "unauthorized" as const
}
/** 401: the key matches no active key. */
export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", fields) {
  readonly code = "invalid_api_key" as const
}
/** 401: the key was revoked, or its member left the organization. */
export class ApiKeyRevoked extends Schema.TaggedError<ApiKeyRevoked>()("ApiKeyRevoked", fields) {
  readonly code = "api_key_revoked" as const
}
/** 403: the key lacks the endpoint's scope (or the member's role no longer allows it). */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", fields) {
  readonly code = "insufficient_scope" as const
}
/** 403: the operation needs a role the caller lacks (deletes need Admin). */
export class InsufficientRole extends Schema.TaggedError<InsufficientRole>()("InsufficientRole", fields) {
  readonly code = "insufficient_role" as const
}
/** 403: the API (or Apps, or the MCP server) is not enabled for the organization. */
export class ApiDisabled extends Schema.TaggedError<ApiDisabled>()("ApiDisabled", fields) {
  readonly code = "api_disabled" as const
}
/** 403: user groups are not enabled for the organization. */
export class GroupsDisabled extends Schema.TaggedError<GroupsDisabled>()("GroupsDisabled", fields) {
  readonly code = "groups_disabled" as const
}
/** 403 (MCP): the plan lacks the MCP server, or runs on a free trial before the first payment. */
export class FeatureNotAvailable extends Schema.TaggedError<FeatureNotAvailable>()("FeatureNotAvailable", fields) {
  readonly code = "feature_not_available" as const
}
/** 403: a plan cap (Knowledgebases, sources per Knowledgebase) is reached. */
export class PlanLimit extends Schema.TaggedError<PlanLimit>()("PlanLimit", fields) {
  readonly code = "plan_limit" as const
}
/** 400: malformed JSON, failed validation, unknown `fields` name, bad cursor or limit. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", fields) {
  readonly code = "invalid_request" as const
}
/** 400: per-user `grants` on an organization that manages access with groups. */
export class GrantsUnsupported extends Schema.TaggedError<GrantsUnsupported>()("GrantsUnsupported", fields) {
  readonly code = "grants_unsupported" as const
}
/** 400: `deploymentId` on a group grant in an organization on group-based access. */
export class PortalScopeUnsupported extends Schema.TaggedError<PortalScopeUnsupported>()(
  "PortalScopeUnsupported",
  fields
) {
  readonly code = "portal_scope_unsupported" as const
}
/** 402: a run or a document search with no credits left. */
export class InsufficientCredits extends Schema.TaggedError<InsufficientCredits>()("InsufficientCredits", fields) {
  readonly code = "insufficient_credits" as const
}
/** 404: no such object in the caller's organization. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {
  readonly code = "not_found" as const
}
/** 409: the same Idempotency-Key with a different body, or while the first request still runs. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {
  readonly code = "conflict" as const
}
/** 409: provisioning the email of a deleted account. */
export class DeletedIdentity extends Schema.TaggedError<DeletedIdentity>()("DeletedIdentity", fields) {
  readonly code = "deleted_identity" as const
}
/** 409: the end user has a live paid subscription on a requested plan. */
export class LivePaidSubscription extends Schema.TaggedError<LivePaidSubscription>()("LivePaidSubscription", fields) {
  readonly code = "live_paid_subscription" as const
}
/** 409: update or delete of a plan's group. */
export class PlanGroupLocked extends Schema.TaggedError<PlanGroupLocked>()("PlanGroupLocked", fields) {
  readonly code = "plan_group" as const
}
/** 422: joining a plan's group directly. */
export class PlanGroupJoin extends Schema.TaggedError<PlanGroupJoin>()("PlanGroupJoin", fields) {
  readonly code = "plan_group" as const
}
/** 422: a `tierPlanId` matches no live plan. */
export class TierNotFound extends Schema.TaggedError<TierNotFound>()("TierNotFound", fields) {
  readonly code = "tier_not_found" as const
}
/** 422: a `groupIds` entry matches no group. */
export class GroupNotFound extends Schema.TaggedError<GroupNotFound>()("GroupNotFound", fields) {
  readonly code = "group_not_found" as const
}
/** 422: a grant's `targetId` matches nothing in the organization. */
export class GrantTargetNotFound extends Schema.TaggedError<GrantTargetNotFound>()("GrantTargetNotFound", fields) {
  readonly code = "grant_target_not_found" as const
}
/** 405: the path is an endpoint's, the method none of its operations'; the answer's `Allow` names theirs. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", fields) {
  readonly code = "method_not_allowed" as const
}
/** 413: a Knowledgebase export above 50 MB. */
export class ExportTooLarge extends Schema.TaggedError<ExportTooLarge>()("ExportTooLarge", fields) {
  readonly code = "export_too_large" as const
}
/** 413: a body over 4.5 MB, inline content over 1 MB, a page body of 256 KB or more. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {
  readonly code = "payload_too_large" as const
}
/** 429: over the key's request rate; `retryAfterSeconds` becomes the `Retry-After` header. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String,
  retryAfterSeconds: Schema.Number
}) {
  readonly code = "rate_limited" as const
}
/** 502: the model provider failed or a Transaction reply did not match its output schema. */
export class RunFailed extends Schema.TaggedError<RunFailed>()("RunFailed", fields) {
  readonly code = "run_failed" as const
}
/** 409: the run was cancelled (`POST /executions/{id}/cancel`) before it finished; nothing was charged. */
export class RunCancelled extends Schema.TaggedError<RunCancelled>()("RunCancelled", fields) {
  readonly code = "run_cancelled" as const
}
/** 500: a server-side fault; safe to retry. Never carries internals. */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", fields) {
  readonly code = "server_error" as const
}

/** Every expected failure of the service. */
export type ApiFailure =
  | Unauthorized
  | InvalidApiKey
  | ApiKeyRevoked
  | InsufficientScope
  | InsufficientRole
  | ApiDisabled
  | GroupsDisabled
  | FeatureNotAvailable
  | PlanLimit
  | InvalidRequest
  | GrantsUnsupported
  | PortalScopeUnsupported
  | InsufficientCredits
  | NotFound
  | MethodNotAllowed
  | Conflict
  | DeletedIdentity
  | LivePaidSubscription
  | PlanGroupLocked
  | PlanGroupJoin
  | TierNotFound
  | GroupNotFound
  | GrantTargetNotFound
  | ExportTooLarge
  | PayloadTooLarge
  | RateLimited
  | RunFailed
  | RunCancelled
  | ServerError
