/** The page and folder endpoints of the contract. */
import { featureContract } from "../../http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { KeptJson } from "../../http/kept-json.js"
import { IdempotencyHeaders } from "../../http/responses.js"
import { FieldsParam, ListOf, listQuery, Narrowable, UpdatedSinceParam } from "../../platform/pagination.js"
import { PageIndexItem } from "../knowledgebases/domain.js"
import { Uuid } from "../../platform/schema.js"
import { AppendPage, CreatePage, MovePage, Page, PageRevision, PageSummary, PageWrite, PatchPage } from "./domain.js"

const PagePath = Schema.Struct({ id: Schema.String, pageId: Schema.String })
const PageIndexList = Schema.Struct({
  knowledgebaseId: Uuid,
  pages: Schema.Array(Narrowable(PageIndexItem, "PageIndexListItem")),
  nextCursor: Schema.NullOr(Schema.String),
  parent: Schema.NullOr(Schema.Struct({ id: Uuid, title: Schema.String, description: Schema.String, isFolder: Schema.Boolean })),
  files: Schema.optional(
    Schema.Array(Schema.Struct({ id: Uuid, name: Schema.String, type: Schema.String, status: Schema.String })).annotations({
      description: "With a `parentPageId` of a page or folder: the documents filed there."
    })
  )
}).annotations({ identifier: "PageIndexList" })
/** A page write that is live (201 for a create, 200 for an edit or append). */
const PageWriteApplied = Schema.Struct({ ...PageWrite.fields, status: Schema.Literal("applied") }).annotations({
  identifier: "PageWrite"
})
/** A page write waiting for review (202). */
const PendingReview = Schema.Struct({ ...PageWrite.fields, status: Schema.Literal("pending_review") }).annotations({
  identifier: "PageWritePending",
  description: "The organization reviews agent writes: nothing is live until a person approves."
})

/** `/knowledgebases/{id}/pages...` */
export class PagesApi extends HttpApiGroup.make("pages")
  .annotate(OpenApi.Description, "A Knowledgebase's pages and folders: list, create, read, edit, append, move and revisions.")
  .add(
    HttpApiEndpoint.get("list", "/knowledgebases/:id/pages")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setUrlParams(
        listQuery({
          parentPageId: Schema.optional(
            Schema.String.annotations({
              description: "A folder or page id, an exact folder name, or `null` for the top level; omit for the whole tree."
            })
          ),
          depth: Schema.optional(
            Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 20)).annotations({
              message: () => "depth must be a whole number from 1 to 20",
              jsonSchema: { type: "integer", minimum: 1, maximum: 20 }
            })
          ),
          fields: FieldsParam,
          updatedSince: UpdatedSinceParam
        })
      )
      .addSuccess(KeptJson(PageIndexList))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "List pages and folders")
      .annotate(
        OpenApi.Description,
        "The page index in tree order. Folders beyond `depth` are `collapsed` and still carry `childCount` and `pageCount`."
      )
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.post("create", "/knowledgebases/:id/pages")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setHeaders(IdempotencyHeaders)
      .setPayload(CreatePage)
      .addSuccess(PageWriteApplied, { status: 201 })
      .addSuccess(PendingReview, { status: 202 })
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.Conflict)
      .annotate(OpenApi.Summary, "Create a page or folder")
      .annotate(
        OpenApi.Description,
        "`templateKey: folder` creates a folder (description only). Answers 202 `pending_review` when the organization reviews agent writes. Takes `Idempotency-Key`."
      )
      .pipe(scope("knowledge:write"))
  )
  .add(
    HttpApiEndpoint.get("get", "/knowledgebases/:id/pages/:pageId")
      .setPath(PagePath)
      .addSuccess(Schema.Struct({ page: Page }).annotations({ identifier: "PageResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a page")
      .annotate(OpenApi.Description, "The page in full: body, attached files, links both ways and children.")
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.patch("update", "/knowledgebases/:id/pages/:pageId")
      .setPath(PagePath)
      .setPayload(PatchPage)
      .addSuccess(PageWriteApplied)
      .addSuccess(PendingReview, { status: 202 })
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Edit a page")
      .annotate(
        OpenApi.Description,
        "Applies `patch` (up to 50 operations, in order; every anchor exactly once, or nothing is written) and/or a new `description`. A folder takes only `description`."
      )
      .pipe(scope("knowledge:write"))
  )
  .add(
    HttpApiEndpoint.post("append", "/knowledgebases/:id/pages/:pageId/append")
      .setPath(PagePath)
      .setPayload(AppendPage)
      .addSuccess(PageWriteApplied)
      .addSuccess(PendingReview, { status: 202 })
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Append to a page")
      .annotate(
        OpenApi.Description,
        "Adds `text` to the end of the page. Live at once (200), or 202 `pending_review` when the organization reviews agent writes: the live page is then untouched until a person approves."
      )
      .pipe(scope("knowledge:write"))
  )
  .add(
    HttpApiEndpoint.post("move", "/knowledgebases/:id/pages/:pageId/move")
      .setPath(PagePath)
      .setPayload(MovePage)
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true), page: PageSummary }).annotations({ identifier: "PageMoved" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Move a page or folder")
      .annotate(OpenApi.Description, "Structural: nothing is rewritten and nothing waits for review. Never inside its own sub-pages.")
      .pipe(scope("knowledge:write"))
  )
  .add(
    HttpApiEndpoint.get("revisions", "/knowledgebases/:id/pages/:pageId/revisions")
      .setPath(PagePath)
      .setUrlParams(listQuery({ fields: FieldsParam }))
      .addSuccess(ListOf("revisions", Narrowable(PageRevision, "PageRevisionListItem")).annotations({ identifier: "PageRevisionList" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "List a page's revisions")
      .annotate(OpenApi.Description, "Every version, applied, pending review or rejected, newest first.")
      .pipe(scope("knowledge:read"))
  )
  .middleware(Authentication) {}

/** The `pages` group's slice of the contract. */
export const PagesContract = featureContract(PagesApi)

export { PageIndexList }
