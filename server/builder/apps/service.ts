/** Apps: the published listing and the listing with drafts. Knows nothing of HTTP. */
import { Effect } from "effect"
import type { Principal } from "../../platform/accounts/domain.js"
import { InsufficientScope } from "../../platform/errors.js"
import { Cursors, type PageRequest } from "../../platform/pagination.js"
import { AppRepo, type Positioned } from "./repo.js"
import type { AppDraftItem, PublishedApp } from "./domain.js"

/** How to list Apps. */
export interface AppListRequest {
  readonly includeDrafts: boolean
  /** ISO 8601; inclusive. */
  readonly updatedSince: string | null
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** App operations for a calling principal. */
export class AppService extends Effect.Service<AppService>()("svc/AppService", {
  effect: Effect.gen(function* () {
    const repo = yield* AppRepo
    const cursors = yield* Cursors

    const pageOf = <A>(list: string, request: AppListRequest, fetch: (page: PageRequest) => Effect.Effect<ReadonlyArray<Positioned<A>>>) =>
      Effect.gen(function* () {
        const page = yield* cursors.request(list, request)
        const rows = yield* fetch(page)
        const result = cursors.page(list, page, rows, (row) => [row.createdAt, row.id])
        return { items: result.items.map((row) => row.item), nextCursor: result.nextCursor }
      })

    return {
      /**
       * One page of Apps, oldest first: published ones with their pinned contract, or, with drafts
       * (which needs `apps:write`), every App with its `published` flag.
       */
      list: (actor: Principal, request: AppListRequest) =>
        Effect.gen(function* () {
          const org = actor.organization.id
          // The cursor is bound to the filters, so it cannot be replayed against another listing.
          const list = `apps:${org}:${request.includeDrafts ? "drafts" : "published"}:${request.updatedSince ?? ""}`
          if (!request.includeDrafts) {
            return yield* pageOf<PublishedApp | AppDraftItem>(list, request, (page) =>
              repo.listPublished(org, request.updatedSince, page)
            )
          }
          if (!actor.scopes.has("apps:write")) {
            return yield* new InsufficientScope({ message: "Listing drafts (include=drafts) needs the scope 'apps:write'." })
          }
          return yield* pageOf<PublishedApp | AppDraftItem>(list, request, (page) =>
            repo.listWithDrafts(org, request.updatedSince, page)
          )
        })
    }
  }),
  dependencies: [AppRepo.Default, Cursors.Default]
}) {}
