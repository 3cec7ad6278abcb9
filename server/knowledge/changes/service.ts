/** The changes feed of a Knowledgebase (or of the whole organization), oldest first. Knows nothing of HTTP. */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { InvalidRequest } from "../../platform/errors.js"
import { Cursors } from "../../platform/pagination.js"
import { KnowledgebaseRepo } from "../knowledgebases/repo.js"
import type { Change } from "./domain.js"
import { ChangeRepo } from "./repo.js"

/** Reading the changes feed. */
export class ChangeFeed extends Effect.Service<ChangeFeed>()("svc/ChangeFeed", {
  effect: Effect.gen(function* () {
    const changes = yield* ChangeRepo
    const knowledgebases = yield* KnowledgebaseRepo
    const cursors = yield* Cursors
    return {
      /** The changes feed of one Knowledgebase (or `all`), oldest first. */
      feed: (
        actor: Principal,
        knowledgebaseId: string,
        params: { since?: string | undefined; limit?: number | undefined; cursor?: string | undefined }
      ) =>
        Effect.gen(function* () {
          if (params.since !== undefined && params.cursor !== undefined) {
            return yield* new InvalidRequest({ message: "Give `since` or `cursor`, not both." })
          }
          const scope = knowledgebaseId === "all" ? null : (yield* knowledgebases.found(actor.organization.id, knowledgebaseId)).id
          const list = `changes:${actor.organization.id}:${scope ?? "all"}`
          const request = yield* cursors.request(list, params)
          const after = request.after === null ? 0 : Number(request.after[0])
          const rows = yield* changes.list({ organizationId: actor.organization.id, knowledgebaseId: scope }, params.since ?? null, after, request.limit)
          const page = cursors.page(list, request, rows, (row) => [row.sequence])
          const last = page.items[page.items.length - 1]
          const tail = last ? last.sequence : Math.max(after, yield* changes.lastSequence(actor.organization.id))
          return {
            tailCursor: cursors.encode(list, [tail]),
            items: page.items.map(
              (row): Change => ({
                knowledgebaseId: row.knowledgebase_id,
                type: row.object_type,
                id: row.object_id,
                change: row.change,
                changedAt: row.changed_at
              })
            ),
            nextCursor: page.nextCursor
          }
        })
    }
  }),
  dependencies: [ChangeRepo.Default, KnowledgebaseRepo.Default, Cursors.Default]
}) {}
