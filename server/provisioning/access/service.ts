/**
 * What an end user may run, computed in one place (the Portal uses it): the union of the grants of
 * every group the person is in (direct memberships, and the plan group of each plan held), Suites
 * expanded to their Apps, plus the deprecated per-user grants; nothing for a revoked or deleted
 * account. Grants are additive only. Knows nothing of HTTP.
 */
import { Effect } from "effect"
import { AccessRepo } from "./repo.js"

/** Whose access, and optionally at which Portal (then only the groups the Portal admits count). */
export interface AccessRequest {
  readonly organizationId: string
  readonly endUserId: string
  /** A Portal of the organization; per-user grants count when unscoped or scoped to it. */
  readonly portalId?: string | undefined
}

/** Access decisions for end users. */
export class AccessService extends Effect.Service<AccessService>()("svc/AccessService", {
  effect: Effect.gen(function* () {
    const repo = yield* AccessRepo

    /** The ids (sorted) of the Apps, Flows and Agents the end user may run. */
    const appsFor = (request: AccessRequest): Effect.Effect<ReadonlyArray<string>> =>
      Effect.gen(function* () {
        const state = yield* repo.state(request.organizationId, request.endUserId)
        if (state === null || state === "revoked" || state === "deleted") return []
        return yield* repo.granted(request.organizationId, request.endUserId, request.portalId)
      })

    return {
      appsFor,
      /** Whether the end user may run the App, Flow or Agent `targetId`. */
      canRun: (request: AccessRequest & { readonly targetId: string }): Effect.Effect<boolean> =>
        Effect.map(appsFor(request), (ids) => ids.includes(request.targetId))
    }
  }),
  dependencies: [AccessRepo.Default]
}) {}
