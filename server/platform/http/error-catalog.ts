/**
 * The one place where expected failures meet HTTP: each error class gets its status, its documented
 * `{error:{code,message}}` schema for the OpenAPI description, and its response.
 */
import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Schema } from "effect"
import * as Errors from "../errors.js"

type ErrorClass = Schema.Schema<Errors.ApiFailure, { readonly _tag: string; readonly message: string }> & {
  new (props: { message: string; retryAfterSeconds: number }): Errors.ApiFailure
}

const entries: ReadonlyArray<readonly [tag: string, status: number, code: string, meaning: string]> = [
  ["Unauthorized", 401, "unauthorized", "Missing or malformed Authorization header."],
  ["InvalidApiKey", 401, "invalid_api_key", "The key matches no active key."],
  ["ApiKeyRevoked", 401, "api_key_revoked", "The key was revoked, or its member left the organization."],
  ["InsufficientCredits", 402, "insufficient_credits", "No credits left for a run or a document search; nothing ran, nothing was charged."],
  ["InsufficientScope", 403, "insufficient_scope", "The key lacks the endpoint's scope (or the member's role no longer allows it)."],
  ["InsufficientRole", 403, "insufficient_role", "The operation needs a role the caller lacks."],
  ["ApiDisabled", 403, "api_disabled", "The API, Apps or the MCP server is not enabled for the organization."],
  ["GroupsDisabled", 403, "groups_disabled", "User groups are not enabled for the organization."],
  ["FeatureNotAvailable", 403, "feature_not_available", "The plan lacks the feature, or runs on a free trial before the first payment."],
  ["PlanLimit", 403, "plan_limit", "A plan cap (Knowledgebases, sources per Knowledgebase) is reached."],
  ["InvalidRequest", 400, "invalid_request", "Malformed JSON, failed validation (the message names the field), unknown `fields` name, bad cursor or limit."],
  ["GrantsUnsupported", 400, "grants_unsupported", "Per-user `grants` on an organization using groups."],
  ["PortalScopeUnsupported", 400, "portal_scope_unsupported", "`deploymentId` on a group grant on group-based access."],
  ["NotFound", 404, "not_found", "No such object in the organization."],
  ["Conflict", 409, "conflict", "The same Idempotency-Key with a different body, or while the first request still runs."],
  ["DeletedIdentity", 409, "deleted_identity", "Provisioning the email of a deleted account."],
  ["LivePaidSubscription", 409, "live_paid_subscription", "A live paid subscription on a requested plan; cancel it with the payment processor first."],
  ["PlanGroupLocked", 409, "plan_group", "Update or delete of a plan's group."],
  ["PlanGroupJoin", 422, "plan_group", "Joining a plan's group directly."],
  ["TierNotFound", 422, "tier_not_found", "A `tierPlanId` matches no live plan."],
  ["GroupNotFound", 422, "group_not_found", "A `groupIds` entry matches no group."],
  ["GrantTargetNotFound", 422, "grant_target_not_found", "The grant's `targetId` is missing in the organization."],
  ["ExportTooLarge", 413, "export_too_large", "The Knowledgebase is over 50 MB."],
  ["PayloadTooLarge", 413, "payload_too_large", "A body over 4.5 MB, inline content over 1 MB, or a page body of 256 KB or more."],
  ["RateLimited", 429, "rate_limited", "Over 120 requests per minute for this key; `Retry-After` gives seconds."],
  ["RunFailed", 502, "run_failed", "The model provider failed, or a Transaction reply did not match its output schema."],
  ["ServerError", 500, "server_error", "A server-side fault; safe to retry."]
]

const meaningOfTag = new Map(entries.map(([tag, , , meaning]) => [tag, meaning]))

/** HTTP status of each error tag. */
export const statusOfTag: ReadonlyMap<string, number> = new Map(entries.map(([tag, status]) => [tag, status]))

/** Every (status, code) pair the API can answer, for documentation and the SDK. */
export const errorCodes: ReadonlyArray<{ readonly tag: string; readonly status: number; readonly code: string }> =
  entries.map(([tag, status, code]) => ({ tag, status, code }))

/** The documented error envelope schema of one error class, carrying its status for HttpApi. */
const envelopeOf = <Self extends Errors.ApiFailure>(
  errorClass: Schema.Schema<Self, any> & (new (props: any) => Self),
  tag: Self["_tag"],
  code: Self["code"]
): Schema.Schema<Self, { readonly error: { readonly code: Self["code"]; readonly message: string } }> => {
  const Envelope = Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String
    })
  }).annotations({
    identifier: `Error_${tag}`,
    description: `\`${code}\`: ${meaningOfTag.get(tag) ?? code}`,
    examples: [{ error: { code, message: "A human-readable explanation." } }]
  })
  return Schema.transform(Envelope, Schema.instanceOf(errorClass), {
    strict: false,
    decode: (envelope) => new errorClass({ message: envelope.error.message, retryAfterSeconds: 60 }),
    encode: (error) => ({ error: { code, message: error.message } })
  }).annotations(HttpApiSchema.annotations({ status: statusOfTag.get(tag) ?? 500 })) as any
}

/** Response schemas, named after the error classes; endpoints declare the ones they can answer. */
export const ErrorResponse = {
  Unauthorized: envelopeOf(Errors.Unauthorized, "Unauthorized", "unauthorized"),
  InvalidApiKey: envelopeOf(Errors.InvalidApiKey, "InvalidApiKey", "invalid_api_key"),
  ApiKeyRevoked: envelopeOf(Errors.ApiKeyRevoked, "ApiKeyRevoked", "api_key_revoked"),
  InsufficientCredits: envelopeOf(Errors.InsufficientCredits, "InsufficientCredits", "insufficient_credits"),
  InsufficientScope: envelopeOf(Errors.InsufficientScope, "InsufficientScope", "insufficient_scope"),
  InsufficientRole: envelopeOf(Errors.InsufficientRole, "InsufficientRole", "insufficient_role"),
  ApiDisabled: envelopeOf(Errors.ApiDisabled, "ApiDisabled", "api_disabled"),
  GroupsDisabled: envelopeOf(Errors.GroupsDisabled, "GroupsDisabled", "groups_disabled"),
  FeatureNotAvailable: envelopeOf(Errors.FeatureNotAvailable, "FeatureNotAvailable", "feature_not_available"),
  PlanLimit: envelopeOf(Errors.PlanLimit, "PlanLimit", "plan_limit"),
  InvalidRequest: envelopeOf(Errors.InvalidRequest, "InvalidRequest", "invalid_request"),
  GrantsUnsupported: envelopeOf(Errors.GrantsUnsupported, "GrantsUnsupported", "grants_unsupported"),
  PortalScopeUnsupported: envelopeOf(Errors.PortalScopeUnsupported, "PortalScopeUnsupported", "portal_scope_unsupported"),
  NotFound: envelopeOf(Errors.NotFound, "NotFound", "not_found"),
  Conflict: envelopeOf(Errors.Conflict, "Conflict", "conflict"),
  DeletedIdentity: envelopeOf(Errors.DeletedIdentity, "DeletedIdentity", "deleted_identity"),
  LivePaidSubscription: envelopeOf(Errors.LivePaidSubscription, "LivePaidSubscription", "live_paid_subscription"),
  PlanGroupLocked: envelopeOf(Errors.PlanGroupLocked, "PlanGroupLocked", "plan_group"),
  PlanGroupJoin: envelopeOf(Errors.PlanGroupJoin, "PlanGroupJoin", "plan_group"),
  TierNotFound: envelopeOf(Errors.TierNotFound, "TierNotFound", "tier_not_found"),
  GroupNotFound: envelopeOf(Errors.GroupNotFound, "GroupNotFound", "group_not_found"),
  GrantTargetNotFound: envelopeOf(Errors.GrantTargetNotFound, "GrantTargetNotFound", "grant_target_not_found"),
  ExportTooLarge: envelopeOf(Errors.ExportTooLarge, "ExportTooLarge", "export_too_large"),
  PayloadTooLarge: envelopeOf(Errors.PayloadTooLarge, "PayloadTooLarge", "payload_too_large"),
  RateLimited: envelopeOf(Errors.RateLimited, "RateLimited", "rate_limited"),
  RunFailed: envelopeOf(Errors.RunFailed, "RunFailed", "run_failed"),
  ServerError: envelopeOf(Errors.ServerError, "ServerError", "server_error")
}

/** Whether a value is one of the service's expected failures. */
export const isApiFailure = (value: unknown): value is Errors.ApiFailure =>
  typeof value === "object" &&
  value !== null &&
  "_tag" in value &&
  "code" in value &&
  statusOfTag.has((value as { _tag: string })._tag)

/** The error's JSON envelope. */
export const envelopeBody = (error: Errors.ApiFailure) => ({ error: { code: error.code, message: error.message } })

/** The HTTP response for an expected failure, `Retry-After` included where it applies. */
export const errorResponse = (error: Errors.ApiFailure): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(envelopeBody(error), {
    status: statusOfTag.get(error._tag) ?? 500,
    headers: error._tag === "RateLimited" ? { "retry-after": String(error.retryAfterSeconds) } : {}
  })

export type { ErrorClass }
