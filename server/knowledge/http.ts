/** HTTP handlers of the Knowledgebases endpoints: thin adapters over `KnowledgebaseService`. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../api.js"
import { CurrentPrincipal } from "../platform/http/authentication.js"
import { idempotentCreate, jsonResponse, jsonTextResponse } from "../platform/http/responses.js"
import { parseFields, project } from "../platform/pagination.js"
import { knowledgebaseFields } from "./domain.js"
import { exportContentType } from "./export.js"
import { PageService } from "./page-service.js"
import { ReviewService } from "./review.js"
import { SearchService } from "./search.js"
import { KnowledgebaseService } from "./service.js"

/** `Content-Disposition` for a download: an ASCII fallback name and the exact UTF-8 one (RFC 6266). */
const attachment = (filename: string) =>
  `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(filename)}`

/** Handlers of the `knowledgebases` group. */
export const KnowledgeHttpLive = HttpApiBuilder.group(Api, "knowledgebases", (handlers) =>
  Effect.gen(function* () {
    const knowledgebases = yield* KnowledgebaseService
    const pages = yield* PageService
    const search = yield* SearchService
    const reviews = yield* ReviewService
    /** Encoded answers of kept listing pages (the service keeps a page until anything commits), by `fields`. */
    const encodedPages = new WeakMap<object, Map<string, string>>()
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          const fields = yield* parseFields(urlParams.fields, knowledgebaseFields)
          const page = yield* knowledgebases.list(actor, urlParams)
          const fieldsKey = fields?.join(",") ?? ""
          let byFields = encodedPages.get(page)
          if (!byFields) encodedPages.set(page, (byFields = new Map()))
          let text = byFields.get(fieldsKey)
          if (text === undefined) {
            text = JSON.stringify({ knowledgebases: page.items.map((kb) => project(kb, fields)), nextCursor: page.nextCursor })
            byFields.set(fieldsKey, text)
          }
          return jsonTextResponse(200, text)
        })
      )
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            Effect.map(knowledgebases.create(actor, payload), (knowledgebase) => ({
              status: 201,
              body: { knowledgebase }
            }))
          )
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return { knowledgebase: yield* knowledgebases.get(actor, path.id) }
        })
      )
      .handle("export", ({ path }) =>
        Effect.gen(function* () {
          const archive = yield* knowledgebases.export(yield* CurrentPrincipal, path.id)
          return HttpServerResponse.stream(archive.stream, {
            contentType: exportContentType,
            headers: { "content-disposition": attachment(archive.filename) }
          })
        })
      )
      .handle("search", ({ path, payload }) =>
        Effect.gen(function* () {
          return jsonResponse(200, yield* search.search(yield* CurrentPrincipal, path.id, payload))
        })
      )
      .handle("changes", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const page = yield* pages.changes(yield* CurrentPrincipal, path.id, urlParams)
          return jsonResponse(200, { changes: page.items, nextCursor: page.nextCursor, tailCursor: page.tailCursor })
        })
      )
      .handle("review", ({ path }) =>
        Effect.gen(function* () {
          return { review: yield* reviews.get(yield* CurrentPrincipal, path.id, path.reviewId) }
        })
      )
  })
)
