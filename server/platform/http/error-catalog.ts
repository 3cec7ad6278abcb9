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

const entries: ReadonlyArray<readonly [string, number, string]> = [
  ["Unauthorized", 401, "unauthorized"],
  ["InvalidApiKey", 401, "invalid_api_key"],
  ["ApiKeyRevoked", 401, "api_key_revoked"],
  ["InsufficientCredits", 402, "insufficient_credits"],
  ["InsufficientScope", 403, "insufficient_scope"],
  ["InsufficientRole", 403, "insufficient_role"],
  ["ApiDisabled", 403, "api_disabled"],
  ["GroupsDisabled", 403, "groups_disabled"],
  ["FeatureNotAvailable", 403, "feature_not_available"],
  ["PlanLimit", 403, "plan_limit"],
  ["InvalidRequest", 400, "invalid_request"],
  ["GrantsUnsupported", 400, "grants_unsupported"],
  ["PortalScopeUnsupported", 400, "portal_scope_unsupported"],
  ["NotFound", 404, "not_found"],
  ["Conflict", 409, "conflict"],
  ["DeletedIdentity", 409, "deleted_identity"],
  ["LivePaidSubscription", 409, "live_paid_subscription"],
  ["PlanGroupLocked", 409, "plan_group"],
  ["PlanGroupJoin", 422, "plan_group"],
  ["TierNotFound", 422, "tier_not_found"],
  ["GroupNotFound", 422, "group_not_found"],
  ["GrantTargetNotFound", 422, "grant_target_not_found"],
  ["ExportTooLarge", 413, "export_too_large"],
  ["PayloadTooLarge", 413, "payload_too_large"],
  ["RateLimited", 429, "rate_limited"],
  ["RunFailed", 502, "run_failed"],
  ["ServerError", 500, "server_error"]
]

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
    description: `${code}`,
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
