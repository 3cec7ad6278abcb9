/** HTTP handlers of the page endpoints: thin adapters over `PageService`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { PagesContract } from "./api.js"
import { CurrentPrincipal } from "../../platform/http/authentication.js"
import { idempotentCreate, jsonResponse } from "../../platform/http/responses.js"
import { parseFields, project } from "../../platform/pagination.js"
import { pageIndexFields, type PageWrite, revisionFields } from "./domain.js"
import { PageService } from "./service.js"

/** 202 for a write waiting for review, else `applied`. */
const writeStatus = (write: PageWrite, applied: number) => (write.status === "pending_review" ? 202 : applied)

/** Handlers of the `pages` group. */
export const PagesHttpLive = HttpApiBuilder.group(PagesContract, "pages", (handlers) =>
  Effect.gen(function* () {
    const pages = yield* PageService
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const fields = yield* parseFields(urlParams.fields, pageIndexFields)
          const index = yield* pages.index(yield* CurrentPrincipal, path.id, urlParams)
          return jsonResponse(200, {
            knowledgebaseId: path.id,
            pages: index.items.map((item) => project(item, fields)),
            nextCursor: index.nextCursor,
            parent: index.parent,
            ...(index.files === undefined ? {} : { files: index.files })
          })
        })
      )
      .handle("create", ({ path, headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            Effect.map(pages.create(actor, path.id, payload), (write) => ({ status: writeStatus(write, 201), body: write }))
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
          const write = yield* pages.patch(yield* CurrentPrincipal, path.id, path.pageId, payload)
          return jsonResponse(writeStatus(write, 200), write)
        })
      )
      .handle("append", ({ path, payload }) =>
        Effect.gen(function* () {
          const write = yield* pages.append(yield* CurrentPrincipal, path.id, path.pageId, payload.text)
          return jsonResponse(writeStatus(write, 200), write)
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
          return jsonResponse(200, { revisions: page.items.map((revision) => project(revision, fields)), nextCursor: page.nextCursor })
        })
      )
  })
)
