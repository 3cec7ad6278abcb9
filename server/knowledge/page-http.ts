/** HTTP handlers of the page endpoints: thin adapters over `PageService`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../api.js"
import { CurrentPrincipal } from "../platform/http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../platform/http/responses.js"
import { parseFields, project } from "../platform/pagination.js"
import { pageIndexFields, revisionFields } from "./page-domain.js"
import { PageService } from "./page-service.js"

/** A page write as `create` declares it: 201, or 202 waiting for review (stored for idempotent replays). */
const createdPage = declaredAnswer(Api.groups["pages"]!.endpoints["create"]!.successSchema)

/** Handlers of the `pages` group. */
export const PagesHttpLive = HttpApiBuilder.group(Api, "pages", (handlers) =>
  Effect.gen(function* () {
    const pages = yield* PageService
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const fields = yield* parseFields(urlParams.fields, pageIndexFields)
          const index = yield* pages.index(yield* CurrentPrincipal, path.id, urlParams)
          return {
            knowledgebaseId: path.id,
            pages: index.items.map((item) => project(item, fields)),
            nextCursor: index.nextCursor,
            parent: index.parent,
            ...(index.files === undefined ? {} : { files: index.files })
          }
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
