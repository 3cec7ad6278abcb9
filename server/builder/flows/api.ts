/**
 * The Flows endpoints of the contract. The create and the draft edit declare their body schemas
 * for the document, but their handlers read the body as sent, so one 400 names every problem.
 */
import { featureContract } from "../../http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { IdempotencyHeaders } from "../../http/responses.js"
import { FieldsParam, ListOf, listQuery, Narrowable, UpdatedSinceParam } from "../../platform/pagination.js"
import { Deleted, PublishedVersion } from "../versions/domain.js"
import { Flow, FlowDefinition, FlowDraft, FlowDraftItem, FlowDraftPatch } from "./domain.js"

/** A Flow of either listing; a property of the other listing's shape never matches (so none is dropped). */
const noOtherProperties = { parseOptions: { onExcessProperty: "error" } } as const
const FlowList = ListOf(
  "flows",
  Schema.Union(
    Narrowable(Flow, "FlowListItem").annotations(noOtherProperties),
    Narrowable(FlowDraftItem, "FlowDraftListItem").annotations(noOtherProperties)
  )
).annotations({ identifier: "FlowList" })
const FlowPath = Schema.Struct({ id: Schema.String })
const DraftResponse = Schema.Struct({ flow: FlowDraft }).annotations({ identifier: "FlowDraftResponse" })

/** `/flows` */
export class FlowsApi extends HttpApiGroup.make("flows")
  .annotate(OpenApi.Description, "Flows: list, create, edit the draft, publish, read and delete.")
  .add(
    HttpApiEndpoint.get("list", "/flows")
      .setUrlParams(
        listQuery({
          include: Schema.optional(
            Schema.Literal("drafts").annotations({ description: "`drafts` lists every Flow with `published`; needs `flows:write`.", message: () => 'must be "drafts"' })
          ),
          fields: FieldsParam,
          updatedSince: UpdatedSinceParam
        })
      )
      .addSuccess(FlowList)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List Flows")
      .annotate(
        OpenApi.Description,
        "Published Flows (their published version), oldest first, each with its `inputs` (parameter name, label, type, options, required) and the same list as a JSON Schema (`inputsSchema`, draft 2020-12); with `include=drafts` every Flow with its `published` flag."
      )
      .pipe(scope("flows:read"))
  )
  .add(
    HttpApiEndpoint.post("create", "/flows")
      .setHeaders(IdempotencyHeaders)
      .setPayload(FlowDefinition)
      .addSuccess(DraftResponse, { status: 201 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.Conflict)
      .annotate(OpenApi.Summary, "Create a Flow")
      .annotate(
        OpenApi.Description,
        "Creates an unpublished Flow and answers its draft. Parameter names derive from labels (`Company name` -> `company_name`); colliding names, unknown `{{variables}}` and references (`agentId`, `knowledgebaseIds`) that are not the organization's are refused, every problem named in one 400. Takes `Idempotency-Key`."
      )
      .pipe(scope("flows:write"))
  )
  .add(
    HttpApiEndpoint.get("get", "/flows/:id")
      .setPath(FlowPath)
      .addSuccess(Schema.Struct({ flow: Flow }).annotations({ identifier: "FlowResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a published Flow")
      .annotate(OpenApi.Description, "The published version's inputs and their JSON Schema. A Flow never published is `not_found`.")
      .pipe(scope("flows:read"))
  )
  .add(
    HttpApiEndpoint.del("delete", "/flows/:id")
      .setPath(FlowPath)
      .addSuccess(Deleted)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientRole)
      .annotate(OpenApi.Summary, "Delete a Flow")
      .annotate(
        OpenApi.Description,
        "Deletes the Flow with its draft and every version. Needs the Admin role: an organization key, or a personal key of an Admin (else 403 `insufficient_role`)."
      )
      .pipe(scope("flows:write"))
  )
  .add(
    HttpApiEndpoint.get("getDraft", "/flows/:id/draft")
      .setPath(FlowPath)
      .addSuccess(DraftResponse)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a Flow's draft")
      .annotate(OpenApi.Description, "The draft as it stands, edited or not since the last publish. A draft is authoring: it needs `flows:write`.")
      .pipe(scope("flows:write"))
  )
  .add(
    HttpApiEndpoint.patch("updateDraft", "/flows/:id/draft")
      .setPath(FlowPath)
      .setPayload(FlowDraftPatch)
      .addSuccess(DraftResponse)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "Edit a Flow's draft")
      .annotate(
        OpenApi.Description,
        "Replaces the given properties (at least one; `output: null` removes the output template); the whole draft is checked again, every problem named. The published version is untouched until the next publish."
      )
      .pipe(scope("flows:write"))
  )
  .add(
    HttpApiEndpoint.post("publish", "/flows/:id/publish")
      .setPath(FlowPath)
      .addSuccess(PublishedVersion)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "Publish a Flow")
      .annotate(
        OpenApi.Description,
        "Copies the draft into the next immutable numbered version (1, 2, …), which runs from now on. An Agent or Knowledgebase the draft names that no longer exists is refused by path."
      )
      .pipe(scope("flows:write"))
  )
  .middleware(Authentication) {}

export { FlowList }

/** The `flows` group's slice of the contract. */
export const FlowsContract = featureContract(FlowsApi)
