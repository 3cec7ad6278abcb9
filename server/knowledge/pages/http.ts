/** HTTP handlers of the page endpoints: thin adapters over `PageService`. */
import { Effect } from "effect"
import { PagesContract } from "./api.js"
import { CurrentPrincipal } from "../../http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../../http/responses.js"
import { parseFields, project } from "../../platform/pagination.js"
import { CacheVersions } from "../../platform/sql/cache-versions.js"
import type { PageIndexList } from "./api.js"
import { pageIndexFields, revisionFields } from "./domain.js"
import { PageService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** A page write as `create` declares it: 201, or 202 waiting for review (stored for idempotent replays). */
const createdPage = declaredAnswer(PagesContract.groups["pages"]!.endpoints["create"]!.successSchema)

/** How many page index answers are kept at most (all are dropped when a Knowledgebase, page or source is written). */
const keptIndexAnswers = 256

/** Handlers of the `pages` group. */
export const PagesHttpLive = serveGroup(PagesContract, "pages", (handlers) =>
  Effect.gen(function* () {
    const pages = yield* PageService
    const answersVersion = (yield* CacheVersions).of(["knowledgebases", "pages", "sources"])
    /**
     * Page index answers, kept while no Knowledgebase, page or source is written (`CacheVersions`), by organization,
     * Knowledgebase, query and fields: a polled tree is neither rebuilt nor encoded again (the
     * declared `KeptJson` schema encodes each answer once). Each is kept under the version read
     * before its queries, so an answer that may predate a commit is never served after it.
     */
    const indexAnswers = new Map<string, typeof PageIndexList.Type>()
    let answersAtVersion = -1
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          const fields = yield* parseFields(urlParams.fields, pageIndexFields)
          const version = answersVersion()
          if (version !== answersAtVersion) {
            indexAnswers.clear()
            answersAtVersion = version
          }
          const key = JSON.stringify([
            actor.organization.id,
            path.id,
            urlParams.parentPageId ?? null,
            urlParams.depth ?? null,
            urlParams.updatedSince ?? null,
            urlParams.limit ?? null,
            urlParams.cursor ?? null,
            fields
          ])
          const kept = indexAnswers.get(key)
          if (kept) return kept
          const index = yield* pages.index(actor, path.id, urlParams)
          const answer: typeof PageIndexList.Type = {
            knowledgebaseId: path.id,
            pages: index.items.map((item) => project(item, fields)),
            nextCursor: index.nextCursor,
            parent: index.parent,
            ...(index.files === undefined ? {} : { files: index.files })
          }
          if (answersAtVersion === version) {
            if (indexAnswers.size >= keptIndexAnswers) indexAnswers.clear()
            indexAnswers.set(key, answer)
          }
          return answer
        })
      )
      .handle("create", ({ path, headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            pages.create(actor, path.id, payload),
            createdPage
          )
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          return { page: yield* pages.get(yield* CurrentPrincipal, path.id, path.pageId) }
        })
      )
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          return yield* pages.patch(yield* CurrentPrincipal, path.id, path.pageId, payload)
        })
      )
      .handle("append", ({ path, payload }) =>
        Effect.gen(function* () {
          return yield* pages.append(yield* CurrentPrincipal, path.id, path.pageId, payload.text)
        })
      )
      .handle("move", ({ path, payload }) =>
        Effect.gen(function* () {
          const page = yield* pages.move(yield* CurrentPrincipal, path.id, path.pageId, payload.parentPageId)
          return { ok: true as const, page }
        })
      )
      .handle("revisions", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const fields = yield* parseFields(urlParams.fields, revisionFields)
          const page = yield* pages.revisions(yield* CurrentPrincipal, path.id, path.pageId, urlParams)
          return { revisions: page.items.map((revision) => project(revision, fields)), nextCursor: page.nextCursor }
        })
      )
  })
)
