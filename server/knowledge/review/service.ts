/**
 * The review inbox of an organization that reviews agent writes: page writes and source uploads
 * waiting for a person, approved or rejected by id (`svc review`), and one item read through the
 * API at the `reviewPath` of the write's answer.
 */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { NotFound } from "../../platform/errors.js"
import { PageRepo } from "../pages/repo.js"
import { PageService } from "../pages/service.js"
import { KnowledgebaseRepo } from "../knowledgebases/repo.js"
import { previewOf, type ReviewItem } from "./domain.js"
import { SourceRepo } from "../sources/repo.js"
import { SourceService } from "../sources/service.js"

const textTypes = new Set(["md", "txt", "csv"])

/** Page writes and uploads waiting for review. */
export class ReviewService extends Effect.Service<ReviewService>()("svc/ReviewService", {
  effect: Effect.gen(function* () {
    const pages = yield* PageService
    const sources = yield* SourceService
    const pageRepo = yield* PageRepo
    const sourceRepo = yield* SourceRepo
    const knowledgebases = yield* KnowledgebaseRepo
    const isNotFound = (error: { _tag: string }) => error._tag === "NotFound"

    /** A page write of the Knowledgebase, waiting or settled. */
    const pageItem = (organizationId: string, knowledgebaseId: string, id: string) =>
      Effect.map(pageRepo.revisionForUpdate(organizationId, id), (revision): ReviewItem | null =>
        revision === null || revision.knowledgebase_id !== knowledgebaseId || (revision.reviewed_at === null && revision.status !== "pending_review")
          ? null
          : {
              id: revision.id,
              kind: `page_${revision.kind}`,
              status: revision.status,
              knowledgebaseId,
              pageId: revision.page_id,
              sourceId: null,
              author: revision.author,
              createdAt: revision.created_at,
              reviewedAt: revision.reviewed_at,
              proposed: {
                title: revision.title,
                description: revision.description,
                preview: previewOf(revision.markdown),
                sizeBytes: Buffer.byteLength(revision.markdown),
                type: null,
                url: null
              }
            }
      )

    /** An upload to the Knowledgebase waiting for review. */
    const sourceItem = (knowledgebaseId: string, id: string) =>
      Effect.gen(function* () {
        const row = yield* sourceRepo.find(knowledgebaseId, id)
        if (row === null || row.status !== "pending_review") return null
        const original = textTypes.has(row.type) ? yield* sourceRepo.original(row.id) : null
        return {
          id: row.id,
          kind: "source_upload",
          status: "pending_review",
          knowledgebaseId,
          pageId: null,
          sourceId: row.id,
          author: row.author,
          createdAt: row.created_at,
          reviewedAt: null,
          proposed: {
            title: row.name,
            description: null,
            preview: original ? previewOf(new TextDecoder().decode(original.bytes.subarray(0, 4 * 500))) : "",
            sizeBytes: row.size_bytes,
            type: row.type,
            url: row.url
          }
        } satisfies ReviewItem
      })

    return {
      /**
       * One review item of a Knowledgebase of the caller's organization: a page write (waiting,
       * applied or rejected) or an upload while it waits. Anything else, another Knowledgebase's
       * item or another organization's, is 404.
       */
      get: (actor: Principal, knowledgebaseId: string, id: string) =>
        Effect.gen(function* () {
          const kb = yield* knowledgebases.byId(actor.organization.id, knowledgebaseId)
          if (!kb) return yield* new NotFound({ message: `No Knowledgebase '${knowledgebaseId}' in this organization.` })
          const item = (yield* pageItem(actor.organization.id, kb.id, id)) ?? (yield* sourceItem(kb.id, id))
          if (!item) return yield* new NotFound({ message: `No review item '${id}' in this Knowledgebase.` })
          return item
        }),
      /** Everything waiting, oldest first. */
      list: (organizationId: string) =>
        Effect.map(Effect.zip(pages.pendingReviews(organizationId), sources.pendingReviews(organizationId)), ([pageItems, sourceItems]) =>
          // A stable sort by time alone keeps each list's own write order among items of the same instant.
          [...pageItems, ...sourceItems].sort((a, b) => a.createdAt.localeCompare(b.createdAt))
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
  dependencies: [PageService.Default, SourceService.Default, PageRepo.Default, SourceRepo.Default, KnowledgebaseRepo.Default]
}) {}
