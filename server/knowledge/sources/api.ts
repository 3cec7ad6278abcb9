/** The source (document) endpoints of the contract. */
import { featureContract } from "../../http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { IdempotencyHeaders } from "../../http/responses.js"
import { FieldsParam, listQuery, Narrowable, UpdatedSinceParam } from "../../platform/pagination.js"
import { Source } from "../knowledgebases/domain.js"
import { Uuid } from "../../platform/schema.js"
import { CreateSourceJson, CreateSourceUpload, MoveSource, SourceWrite } from "./domain.js"

const SourcePath = Schema.Struct({ id: Schema.String, sourceId: Schema.String })
const SourceList = Schema.Struct({
  knowledgebaseId: Uuid,
  sources: Schema.Array(Narrowable(Source, "SourceListItem")),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "SourceList" })

/** `/knowledgebases/{id}/sources...` */
export class SourcesApi extends HttpApiGroup.make("sources")
  .annotate(OpenApi.Description, "A Knowledgebase's sources: upload, list, read and file them.")
  .add(
    HttpApiEndpoint.get("list", "/knowledgebases/:id/sources")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setUrlParams(listQuery({ fields: FieldsParam, updatedSince: UpdatedSinceParam }))
      .addSuccess(SourceList)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "List sources")
      .annotate(OpenApi.Description, "The Knowledgebase's documents, oldest first. File bodies are never returned; content is reached by search.")
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.post("create", "/knowledgebases/:id/sources")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setHeaders(IdempotencyHeaders)
      .setPayload(Schema.Union(CreateSourceJson, CreateSourceUpload))
      .addSuccess(SourceWrite, { status: 202 })
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.PlanLimit)
      .addError(ErrorResponse.Conflict)
      .addError(ErrorResponse.PayloadTooLarge)
      .annotate(OpenApi.Summary, "Upload a source")
      .annotate(
        OpenApi.Description,
        "JSON with `name` and exactly one of `contentMarkdown`, `contentText` (up to 1 MB) or `url` (public http(s), fetched by the service); or `multipart/form-data` with a `file` (PDF, CSV, TXT or MD) within the 4.5 MB request limit. Answers 202 with `status` `processing` (poll the source until `ready` or `failed`) or `pending_review`. Takes `Idempotency-Key`."
      )
      .pipe(scope("knowledge:write"))
  )
  .add(
    HttpApiEndpoint.get("get", "/knowledgebases/:id/sources/:sourceId")
      .setPath(SourcePath)
      .addSuccess(Schema.Struct({ source: Source }).annotations({ identifier: "SourceResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a source")
      .annotate(OpenApi.Description, "One source; reading one that is processing checks its indexing and refreshes the status.")
      .pipe(scope("knowledge:read"))
  )
  .add(
    HttpApiEndpoint.post("move", "/knowledgebases/:id/sources/:sourceId/move")
      .setPath(SourcePath)
      .setPayload(MoveSource)
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true), source: Source }).annotations({ identifier: "SourceMoved" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "File a source")
      .annotate(
        OpenApi.Description,
        "Files the document under a folder or page of this Knowledgebase, or unfiles it (`null`). A document lives in one place across the organization: filing it here moves it out of a folder elsewhere. `svcsource://` mentions never change filing."
      )
      .pipe(scope("knowledge:write"))
  )
  .middleware(Authentication) {}

/** The `sources` group's slice of the contract. */
export const SourcesContract = featureContract(SourcesApi)
