/** HTTP handlers of the Knowledgebases endpoints: thin adapters over `KnowledgebaseService`. */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { KnowledgebasesContract } from "./api.js"
import type { Principal } from "../identity/domain.js"
import { CurrentPrincipal } from "../http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../http/responses.js"
import { parseFields, project } from "../platform/pagination.js"
import { type CreateKnowledgebase, type Knowledgebase, knowledgebaseFields } from "./knowledgebases/domain.js"
import { exportContentType } from "./export/archive.js"
import { ChangeFeed } from "./changes/service.js"
import { SearchService } from "./search/service.js"
import { ReviewService } from "./review/service.js"
import { KnowledgebaseService } from "./service.js"
import { serveGroup } from "../http/served-groups.js"

/** `Content-Disposition` for a download: an ASCII fallback name and the exact UTF-8 one (RFC 6266). */
const attachment = (filename: string) =>
  `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(filename)}`

/** A created Knowledgebase as `create` declares it (stored for idempotent replays). */
const createdKnowledgebase = declaredAnswer(KnowledgebasesContract.groups["knowledgebases"]!.endpoints["create"]!.successSchema)

/** `POST /knowledgebases` itself. */
const createKnowledgebase = (knowledgebases: KnowledgebaseService, actor: Principal, payload: CreateKnowledgebase) =>
  Effect.map(knowledgebases.create(actor, payload), (knowledgebase) => ({ knowledgebase }))

/** A Knowledgebase listing as answered: its items narrowed to `fields`. */
interface KnowledgebaseListing {
  readonly knowledgebases: ReadonlyArray<Partial<Knowledgebase>>
  readonly nextCursor: string | null
}

/**
 * Answers of kept listing pages (the service keeps a page until anything commits), by page and
 * `fields`. They never change, so the declared `KeptJson` schema encodes each once and reuses its text.
 */
const listings = new WeakMap<object, Map<string, KnowledgebaseListing>>()

/** `GET /knowledgebases` itself. */
const listKnowledgebases = (
  knowledgebases: KnowledgebaseService,
  actor: Principal,
  urlParams: { readonly fields?: string | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }
) =>
  Effect.gen(function* () {
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

/** Handlers of the `knowledgebases` group. */
export const KnowledgeHttpLive = serveGroup(KnowledgebasesContract, "knowledgebases", (handlers) =>
  Effect.gen(function* () {
    const knowledgebases = yield* KnowledgebaseService
    const changes = yield* ChangeFeed
    const search = yield* SearchService
    const reviews = yield* ReviewService
    return handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (actor) => listKnowledgebases(knowledgebases, actor, urlParams)))
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            createKnowledgebase(knowledgebases, actor, payload),
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
