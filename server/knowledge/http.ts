/** HTTP handlers of the Knowledgebases endpoints: thin adapters over `KnowledgebaseService`. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { KnowledgebasesContract } from "./api.js"
import { CurrentPrincipal } from "../platform/http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../platform/http/responses.js"
import { parseFields, project } from "../platform/pagination.js"
import { type Knowledgebase, knowledgebaseFields } from "./knowledgebases/domain.js"
import { exportContentType } from "./export/archive.js"
import { ChangeFeed } from "./changes/service.js"
import { SearchService } from "./search/service.js"
import { ReviewService } from "./review/service.js"
import { KnowledgebaseService } from "./service.js"

/** `Content-Disposition` for a download: an ASCII fallback name and the exact UTF-8 one (RFC 6266). */
const attachment = (filename: string) =>
  `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(filename)}`

/** A created Knowledgebase as `create` declares it (stored for idempotent replays). */
const createdKnowledgebase = declaredAnswer(KnowledgebasesContract.groups["knowledgebases"]!.endpoints["create"]!.successSchema)

/** A Knowledgebase listing as answered: its items narrowed to `fields`. */
interface KnowledgebaseListing {
  readonly knowledgebases: ReadonlyArray<Partial<Knowledgebase>>
  readonly nextCursor: string | null
}

/** Handlers of the `knowledgebases` group. */
export const KnowledgeHttpLive = HttpApiBuilder.group(KnowledgebasesContract, "knowledgebases", (handlers) =>
  Effect.gen(function* () {
    const knowledgebases = yield* KnowledgebaseService
    const changes = yield* ChangeFeed
    const search = yield* SearchService
    const reviews = yield* ReviewService
    /**
     * Answers of kept listing pages (the service keeps a page until anything commits), by `fields`.
     * They never change, so the declared `KeptJson` schema encodes each once and reuses its text.
     */
    const listings = new WeakMap<object, Map<string, KnowledgebaseListing>>()
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          const fields = yield* parseFields(urlParams.fields, knowledgebaseFields)
          const page = yield* knowledgebases.list(actor, urlParams)
          const fieldsKey = fields?.join(",") ?? ""
          let byFields = listings.get(page)
          if (!byFields) listings.set(page, (byFields = new Map()))
          let listing = byFields.get(fieldsKey)
          if (listing === undefined) {
            listing = { knowledgebases: page.items.map((kb) => project(kb, fields)), nextCursor: page.nextCursor }
            byFields.set(fieldsKey, listing)
          }
          return listing
        })
      )
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            Effect.map(knowledgebases.create(actor, payload), (knowledgebase) => ({ knowledgebase })),
            createdKnowledgebase
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
          return yield* search.search(yield* CurrentPrincipal, path.id, payload)
        })
      )
      .handle("changes", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const page = yield* changes.feed(yield* CurrentPrincipal, path.id, urlParams)
          return { changes: page.items, nextCursor: page.nextCursor, tailCursor: page.tailCursor }
        })
      )
      .handle("review", ({ path }) =>
        Effect.gen(function* () {
          return { review: yield* reviews.get(yield* CurrentPrincipal, path.id, path.reviewId) }
        })
      )
  })
)
