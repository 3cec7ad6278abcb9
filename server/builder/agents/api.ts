/** The Agents endpoints of the contract. */
import { featureContract } from "../../http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { IdempotencyHeaders } from "../../http/responses.js"
import { FieldsParam, ListOf, listQuery, Narrowable, UpdatedSinceParam } from "../../platform/pagination.js"
import { Deleted, PublishedVersion } from "../versions/domain.js"
import { Agent, AgentDraft, AgentDraftItem, AgentSummary, CreateAgent, PatchAgentDraft } from "./domain.js"

/** An Agent of either listing; a property of the other listing's shape never matches (so none is dropped). */
const noOtherProperties = { parseOptions: { onExcessProperty: "error" } } as const
const AgentList = ListOf(
  "agents",
  Schema.Union(
    Narrowable(AgentSummary, "AgentListItem").annotations(noOtherProperties),
    Narrowable(AgentDraftItem, "AgentDraftListItem").annotations(noOtherProperties)
  )
).annotations({ identifier: "AgentList" })
const AgentPath = Schema.Struct({ id: Schema.String })
const DraftResponse = Schema.Struct({ agent: AgentDraft }).annotations({ identifier: "AgentDraftResponse" })

/** `/agents` */
export class AgentsApi extends HttpApiGroup.make("agents")
  .annotate(OpenApi.Description, "Agents: list, create, edit the draft, publish, read and delete.")
  .add(
    HttpApiEndpoint.get("list", "/agents")
      .setUrlParams(
        listQuery({
          include: Schema.optional(
            Schema.Literal("drafts").annotations({ description: "`drafts` lists every Agent with `published`; needs `agents:write`.", message: () => 'must be "drafts"' })
          ),
          fields: FieldsParam,
          updatedSince: UpdatedSinceParam
        })
      )
      .addSuccess(AgentList)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List Agents")
      .annotate(
        OpenApi.Description,
        "The id, name and description of each published Agent (its published version), oldest first; with `include=drafts` every Agent with its `published` flag."
      )
      .pipe(scope("agents:read"))
  )
  .add(
    HttpApiEndpoint.post("create", "/agents")
      .setHeaders(IdempotencyHeaders)
      .setPayload(CreateAgent)
      .addSuccess(DraftResponse, { status: 201 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.Conflict)
      .annotate(OpenApi.Summary, "Create an Agent")
      .annotate(
        OpenApi.Description,
        "Creates an unpublished Agent and answers its draft. `knowledgebaseIds` and `flowIds` must be the organization's (every problem named). Takes `Idempotency-Key`."
      )
      .pipe(scope("agents:write"))
  )
  .add(
    HttpApiEndpoint.get("get", "/agents/:id")
      .setPath(AgentPath)
      .addSuccess(Schema.Struct({ agent: Agent }).annotations({ identifier: "AgentResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a published Agent")
      .annotate(OpenApi.Description, "The published version, as it runs. An Agent never published is `not_found`.")
      .pipe(scope("agents:read"))
  )
  .add(
    HttpApiEndpoint.del("delete", "/agents/:id")
      .setPath(AgentPath)
      .addSuccess(Deleted)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientRole)
      .annotate(OpenApi.Summary, "Delete an Agent")
      .annotate(
        OpenApi.Description,
        "Deletes the Agent with its draft and every version. Needs the Admin role: an organization key, or a personal key of an Admin (else 403 `insufficient_role`)."
      )
      .pipe(scope("agents:write"))
  )
  .add(
    HttpApiEndpoint.get("getDraft", "/agents/:id/draft")
      .setPath(AgentPath)
      .addSuccess(DraftResponse)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read an Agent's draft")
      .annotate(OpenApi.Description, "The draft as it stands, edited or not since the last publish. A draft is authoring: it needs `agents:write`.")
      .pipe(scope("agents:write"))
  )
  .add(
    HttpApiEndpoint.patch("updateDraft", "/agents/:id/draft")
      .setPath(AgentPath)
      .setPayload(PatchAgentDraft)
      .addSuccess(DraftResponse)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "Edit an Agent's draft")
      .annotate(
        OpenApi.Description,
        "Changes the given properties (at least one). The published version is untouched until the next publish."
      )
      .pipe(scope("agents:write"))
  )
  .add(
    HttpApiEndpoint.post("publish", "/agents/:id/publish")
      .setPath(AgentPath)
      .addSuccess(PublishedVersion)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Publish an Agent")
      .annotate(OpenApi.Description, "Copies the draft into the next immutable numbered version (1, 2, …), which runs from now on.")
      .pipe(scope("agents:write"))
  )
  .middleware(Authentication) {}

export { AgentList }

/** The `agents` group's slice of the contract. */
export const AgentsContract = featureContract(AgentsApi)
