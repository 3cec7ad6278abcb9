/** The Knowledgebases endpoints of the contract. */
import { featureContract } from "../http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../http/authentication.js"
import { ErrorResponse } from "../http/error-responses.js"
import { scope } from "../http/policy.js"
import { KeptJson } from "../http/kept-json.js"
import { IdempotencyHeaders } from "../http/responses.js"
import { FieldsParam, ListOf, listQuery, Narrowable, UpdatedSinceParam } from "../platform/pagination.js"
import { Change } from "./changes/domain.js"
import { CreateKnowledgebase, Knowledgebase, KnowledgebaseDetail } from "./knowledgebases/domain.js"
import { SearchRequest, SearchResponse } from "./search/domain.js"
import { ReviewItem } from "./review/domain.js"

const KnowledgebaseEnvelope = Schema.Struct({ knowledgebase: Knowledgebase }).annotations({
  identifier: "KnowledgebaseResponse"
})
const KnowledgebaseDetailEnvelope = Schema.Struct({ knowledgebase: KnowledgebaseDetail }).annotations({
  identifier: "KnowledgebaseDetailResponse"
})
const KnowledgebaseList = ListOf("knowledgebases", Narrowable(Knowledgebase, "KnowledgebaseListItem")).annotations({
  identifier: "KnowledgebaseList"
})

const ChangeList = Schema.Struct({
  changes: Schema.Array(Change),
  nextCursor: Schema.NullOr(Schema.String).annotations({ description: "The next page, or null at the end of the feed." }),
  tailCursor: Schema.String.annotations({
    description: "A cursor after the last entry returned (or the feed's current end): poll with it to receive only later changes."
  })
}).annotations({ identifier: "ChangeList" })

/** `/knowledgebases` */
export class KnowledgeApi extends HttpApiGroup.make("knowledgebases")
  .annotate(OpenApi.Description, "Knowledgebases: list, create, read, export, search, the changes feed and review items.")
  .add(
    HttpApiEndpoint.get("list", "/knowledgebases")
      .setUrlParams(listQuery({ fields: FieldsParam }))
      .addSuccess(KeptJson(KnowledgebaseList))
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List Knowledgebases")
      .annotate(OpenApi.Description, "Readable Knowledgebases with source and page counts, oldest first.")
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.post("create", "/knowledgebases")
      .setHeaders(IdempotencyHeaders)
      .setPayload(CreateKnowledgebase)
      .addSuccess(KnowledgebaseEnvelope, { status: 201 })
      .addError(ErrorResponse.PlanLimit)
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.Conflict)
      .addError(ErrorResponse.PayloadTooLarge)
      .annotate(OpenApi.Summary, "Create a Knowledgebase")
      .annotate(OpenApi.Description, "Creates a Knowledgebase within the plan's cap. Takes `Idempotency-Key`.")
      .pipe(scope("knowledge:write"))
  )
  .add(
    HttpApiEndpoint.get("get", "/knowledgebases/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(KnowledgebaseDetailEnvelope)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a Knowledgebase")
      .annotate(OpenApi.Description, "The Knowledgebase with its sources and page index.")
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.get("export", "/knowledgebases/:id/export")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/zip" }).annotations({ description: "A zip archive." }))
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.ExportTooLarge)
      .annotate(OpenApi.Summary, "Export a Knowledgebase")
      .annotate(
        OpenApi.Description,
        "A streamed zip: `manifest.json`, `pages/` as markdown with YAML front matter (folders as directories), `sources.json` (metadata only) and, for a personal key, `memories.json`. 3 per minute per key; over 50 MB answers 413 `export_too_large`."
      )
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.get("changes", "/knowledgebases/:id/changes")
      .setPath(Schema.Struct({ id: Schema.String.annotations({ description: "A Knowledgebase id, or `all`." }) }))
      .setUrlParams(listQuery({ since: UpdatedSinceParam }))
      .addSuccess(ChangeList)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Follow the changes feed")
      .annotate(
        OpenApi.Description,
        "One entry per change of a page, folder or source (a source shows `created`, then `ready`), oldest first; poll with the last `nextCursor`, or start from `since`. Free."
      )
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.post("search", "/knowledgebases/:id/search")
      .setPath(Schema.Struct({ id: Schema.String.annotations({ description: "A Knowledgebase id, or `all`." }) }))
      .setPayload(SearchRequest)
      .addSuccess(SearchResponse)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientCredits)
      .annotate(OpenApi.Summary, "Search Knowledgebases")
      .annotate(
        OpenApi.Description,
        "BM25 over ready, enabled documents (`documents`), pages (`pages`) and, for a personal key, the member's own memories (`memories`). Every hit carries a citation. One credit per call that searches documents; `kinds: [\"pages\"]` is free; 402 `insufficient_credits` with nothing charged when none is left."
      )
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.get("review", "/knowledgebases/:id/reviews/:reviewId")
      .setPath(Schema.Struct({ id: Schema.String, reviewId: Schema.String }))
      .addSuccess(Schema.Struct({ review: ReviewItem }).annotations({ identifier: "ReviewResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a review item")
      .annotate(
        OpenApi.Description,
        "The `reviewPath` of a write answered `pending_review`: what waits for a person (kind, page or document, author, when, and a summary of the proposed content). A page write stays readable once applied or rejected; an upload while it waits. People approve or reject with `svc review`, never through the API."
      )
      .pipe(scope("knowledge:read"))
  )
  .middleware(Authentication) {}

export { KnowledgebaseDetailEnvelope, KnowledgebaseEnvelope, KnowledgebaseList }

/** The `knowledgebases` group's slice of the contract. */
export const KnowledgebasesContract = featureContract(KnowledgeApi)
