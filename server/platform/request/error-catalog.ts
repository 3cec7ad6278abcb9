/**
 * The one catalog of expected failures, whatever door answers them: each error class (which carries
 * its `code`, in `server/platform/errors.ts`) gets its status and its meaning here, once, and its
 * `{error:{code,message}}` envelope. REST answers and documents them through
 * `server/http/error-responses.ts`; MCP and the streams answer the same envelope and status.
 */
import type { Schema } from "effect"
import * as Errors from "../errors.js"

/** An error class of `errors.ts`: a schema of its instances, constructible from a message. */
type ErrorClass<E extends Errors.ApiFailure = Errors.ApiFailure> = Schema.Schema<E, any> & {
  readonly _tag: E["_tag"]
  new (props: { message: string; retryAfterSeconds: number }): E
}

/** What the API makes of one error class. */
export interface CatalogEntry<E extends Errors.ApiFailure> {
  readonly error: ErrorClass<E>
  readonly status: number
  /** When the error is answered, for the OpenAPI description. */
  readonly meaning: string
}

const entry = <E extends Errors.ApiFailure>(error: ErrorClass<E>, status: number, meaning: string): CatalogEntry<E> => ({
  error,
  status,
  meaning
})

/** Every expected failure, by tag: its status and meaning. */
export const catalog = {
  Unauthorized: entry(Errors.Unauthorized, 401, "Missing or malformed Authorization header."),
  InvalidApiKey: entry(Errors.InvalidApiKey, 401, "The key matches no active key."),
  ApiKeyRevoked: entry(Errors.ApiKeyRevoked, 401, "The key was revoked, or its member left the organization."),
  InsufficientCredits: entry(Errors.InsufficientCredits, 402, "No credits left for a run or a document search; nothing ran, nothing was charged."),
  InsufficientScope: entry(Errors.InsufficientScope, 403, "The key lacks the endpoint's scope (or the member's role no longer allows it)."),
  InsufficientRole: entry(Errors.InsufficientRole, 403, "The operation needs a role the caller lacks."),
  ApiDisabled: entry(Errors.ApiDisabled, 403, "The API, Apps or the MCP server is not enabled for the organization."),
  GroupsDisabled: entry(Errors.GroupsDisabled, 403, "User groups are not enabled for the organization."),
  FeatureNotAvailable: entry(Errors.FeatureNotAvailable, 403, "The plan lacks the feature, or runs on a free trial before the first payment."),
  PlanLimit: entry(Errors.PlanLimit, 403, "A plan cap (Knowledgebases, sources per Knowledgebase) is reached."),
  InvalidRequest: entry(Errors.InvalidRequest, 400, "Malformed JSON, failed validation (the message names the field), unknown `fields` name, bad cursor or limit."),
  GrantsUnsupported: entry(Errors.GrantsUnsupported, 400, "Per-user `grants` on an organization using groups."),
  PortalScopeUnsupported: entry(Errors.PortalScopeUnsupported, 400, "`deploymentId` on a group grant on group-based access."),
  NotFound: entry(Errors.NotFound, 404, "No such object in the organization."),
  MethodNotAllowed: entry(Errors.MethodNotAllowed, 405, "The path is an endpoint's, the method is not one of its operations'; `Allow` names those."),
  Conflict: entry(Errors.Conflict, 409, "The same Idempotency-Key with a different body, or while the first request still runs."),
  DeletedIdentity: entry(Errors.DeletedIdentity, 409, "Provisioning the email of a deleted account."),
  LivePaidSubscription: entry(Errors.LivePaidSubscription, 409, "A live paid subscription on a requested plan; cancel it with the payment processor first."),
  PlanGroupLocked: entry(Errors.PlanGroupLocked, 409, "Update or delete of a plan's group."),
  PlanGroupJoin: entry(Errors.PlanGroupJoin, 422, "Joining a plan's group directly."),
  TierNotFound: entry(Errors.TierNotFound, 422, "A `tierPlanId` matches no live plan."),
  GroupNotFound: entry(Errors.GroupNotFound, 422, "A `groupIds` entry matches no group."),
  GrantTargetNotFound: entry(Errors.GrantTargetNotFound, 422, "The grant's `targetId` is missing in the organization."),
  ExportTooLarge: entry(Errors.ExportTooLarge, 413, "The Knowledgebase is over 50 MB."),
  PayloadTooLarge: entry(Errors.PayloadTooLarge, 413, "A body over 4.5 MB, inline content over 1 MB, or a page body of 256 KB or more."),
  RateLimited: entry(Errors.RateLimited, 429, "Over 120 requests per minute for this key; `Retry-After` gives seconds."),
  RunFailed: entry(Errors.RunFailed, 502, "The model provider failed, or a Transaction reply did not match its output schema."),
  RunCancelled: entry(Errors.RunCancelled, 409, "The run was cancelled (`POST /executions/{id}/cancel`) before it finished; nothing was charged."),
  ServerError: entry(Errors.ServerError, 500, "A server-side fault; safe to retry.")
} satisfies { readonly [Tag in Errors.ApiFailure["_tag"]]: CatalogEntry<Extract<Errors.ApiFailure, { readonly _tag: Tag }>> }

type Catalog = typeof catalog

/** The tag of an expected failure. */
export type Tag = keyof Catalog

/** The failure of one tag. */
export type FailureOf<T extends Tag> = Extract<Errors.ApiFailure, { readonly _tag: T }>

/** Every tag of the catalog, in its order. */
export const tags = Object.keys(catalog) as ReadonlyArray<Tag>

/** The code an error class declares (an instance field of every error of `errors.ts`). */
export const codeOf = <E extends Errors.ApiFailure>(error: ErrorClass<E>): E["code"] =>
  new error({ message: "", retryAfterSeconds: 0 }).code

/** HTTP status of each error tag. */
export const statusOfTag: ReadonlyMap<string, number> = new Map(tags.map((tag) => [tag, catalog[tag].status]))

/** Every (status, code) pair the API can answer, for documentation and the SDK. */
export const errorCodes: ReadonlyArray<{ readonly tag: string; readonly status: number; readonly code: string }> = tags.map(
  (tag) => ({ tag, status: catalog[tag].status, code: codeOf(catalog[tag].error as ErrorClass) })
)

/** Whether a value is one of the service's expected failures. */
export const isApiFailure = (value: unknown): value is Errors.ApiFailure =>
  typeof value === "object" &&
  value !== null &&
  "_tag" in value &&
  "code" in value &&
  statusOfTag.has((value as { _tag: string })._tag)

/** The error's JSON envelope. */
export const envelopeBody = (error: Errors.ApiFailure) => ({ error: { code: error.code, message: error.message } })

/** The headers an expected failure's answer carries besides its body's: `Retry-After` where it applies. */
export const errorHeaders = (error: Errors.ApiFailure): Readonly<Record<string, string>> =>
  error._tag === "RateLimited" ? { "retry-after": String(error.retryAfterSeconds) } : {}

export type { ErrorClass }
