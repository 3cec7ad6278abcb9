/**
 * The review inbox of an organization that reviews agent writes: page writes and source uploads
 * waiting for a person, approved or rejected by id (`svc review`).
 */
import { Effect } from "effect"
import { NotFound } from "../../platform/errors.js"
import { PageService } from "../pages/service.js"
import { SourceService } from "../sources/service.js"

/** Page writes and uploads waiting for review. */
export class ReviewService extends Effect.Service<ReviewService>()("svc/ReviewService", {
  effect: Effect.gen(function* () {
    const pages = yield* PageService
    const sources = yield* SourceService
    const isNotFound = (error: { _tag: string }) => error._tag === "NotFound"
    return {
      /** Everything waiting, oldest first. */
      list: (organizationId: string) =>
        Effect.map(Effect.zip(pages.pendingReviews(organizationId), sources.pendingReviews(organizationId)), ([pageItems, sourceItems]) =>
          [...pageItems, ...sourceItems].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
        ),
      /** Approves a page write (it goes live) or an upload (it starts indexing). */
      approve: (organizationId: string, id: string) =>
        pages.approve(organizationId, id).pipe(
          Effect.map((approved) => ({ ...approved, kind: "page" as const })),
          Effect.catchIf(isNotFound, () => Effect.map(sources.approve(organizationId, id), (approved) => ({ ...approved, kind: "source" as const }))),
          Effect.catchIf(isNotFound, () => Effect.fail(new NotFound({ message: `No review item '${id}' in this organization.` })))
        ),
      /** Rejects a page write (kept as rejected) or an upload (deleted). */
      reject: (organizationId: string, id: string) =>
        pages.reject(organizationId, id).pipe(
          Effect.map((rejected) => ({ ...rejected, kind: "page" as const })),
          Effect.catchIf(isNotFound, () => Effect.map(sources.reject(organizationId, id), (rejected) => ({ ...rejected, kind: "source" as const }))),
          Effect.catchIf(isNotFound, () => Effect.fail(new NotFound({ message: `No review item '${id}' in this organization.` })))
        )
    }
  }),
  dependencies: [PageService.Default, SourceService.Default]
}) {}
