/** The Apps endpoints of the contract. */
import { featureContract } from "../../http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { gate, scope } from "../../http/policy.js"
import { IdempotencyHeaders } from "../../http/responses.js"
import { FieldsParam, ListOf, listQuery, Narrowable, UpdatedSinceParam } from "../../platform/pagination.js"
import { Deleted, PublishedVersion } from "../versions/domain.js"
import { App, AppDraft, AppDraftItem, CreateApp, PatchAppDraft, PublishedApp } from "./domain.js"

/** An App of either listing; a property of the other listing's shape never matches (so none is dropped). */
const noOtherProperties = { parseOptions: { onExcessProperty: "error" } } as const
const AppList = ListOf(
  "apps",
  Schema.Union(
    Narrowable(PublishedApp, "PublishedAppListItem").annotations(noOtherProperties),
    Narrowable(AppDraftItem, "AppDraftListItem").annotations(noOtherProperties)
  )
).annotations({ identifier: "AppList" })

const AppPath = Schema.Struct({ id: Schema.String })
const DraftResponse = Schema.Struct({ app: AppDraft }).annotations({ identifier: "AppDraftResponse" })

/** `/apps`: answers 403 `api_disabled` until the organization's `apps` gate is on. */
export class AppsApi extends HttpApiGroup.make("apps")
  .annotate(OpenApi.Description, "Apps: list, create, edit the draft, publish, read and delete.")
  .add(
    HttpApiEndpoint.get("list", "/apps")
      .setUrlParams(
        listQuery({
          include: Schema.optional(
            Schema.Literal("drafts").annotations({ description: "`drafts` lists every App with `published`; needs `apps:write`.", message: () => 'must be "drafts"' })
          ),
          fields: FieldsParam,
          updatedSince: UpdatedSinceParam
        })
      )
      .addSuccess(AppList)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List Apps")
      .annotate(
        OpenApi.Description,
        "Published Apps with their contracts (services, Transaction Service schemas), oldest first; with `include=drafts` every App with its `published` flag."
      )
      .pipe(scope("apps:read"))
  )
  .add(
    HttpApiEndpoint.post("create", "/apps")
      .setHeaders(IdempotencyHeaders)
      .setPayload(CreateApp)
      .addSuccess(DraftResponse, { status: 201 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.Conflict)
      .annotate(OpenApi.Summary, "Create an App")
      .annotate(
        OpenApi.Description,
        "Creates an unpublished App and answers its draft. `agentIds` and `flowIds` must be the organization's (every problem named); the Transaction Service is set with `PATCH /apps/{id}/draft`. Takes `Idempotency-Key`."
      )
      .pipe(scope("apps:write"))
  )
  .add(
    HttpApiEndpoint.get("get", "/apps/:id")
      .setPath(AppPath)
      .addSuccess(Schema.Struct({ app: App }).annotations({ identifier: "AppResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a published App")
      .annotate(
        OpenApi.Description,
        "The published version with its contract and the member Agent and Flow versions it pinned. An App never published is `not_found`."
      )
      .pipe(scope("apps:read"))
  )
  .add(
    HttpApiEndpoint.del("delete", "/apps/:id")
      .setPath(AppPath)
      .addSuccess(Deleted)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientRole)
      .annotate(OpenApi.Summary, "Delete an App")
      .annotate(
        OpenApi.Description,
        "Deletes the App with its draft and every version. Needs the Admin role: an organization key, or a personal key of an Admin (else 403 `insufficient_role`)."
      )
      .pipe(scope("apps:write"))
  )
  .add(
    HttpApiEndpoint.get("getDraft", "/apps/:id/draft")
      .setPath(AppPath)
      .addSuccess(DraftResponse)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read an App's draft")
      .annotate(OpenApi.Description, "The draft as it stands, edited or not since the last publish. A draft is authoring: it needs `apps:write`.")
      .pipe(scope("apps:write"))
  )
  .add(
    HttpApiEndpoint.patch("updateDraft", "/apps/:id/draft")
      .setPath(AppPath)
      .setPayload(PatchAppDraft)
      .addSuccess(DraftResponse)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "Edit an App's draft")
      .annotate(
        OpenApi.Description,
        "Changes the given properties (at least one); `api` sets the Transaction Service (`transactionEnabled`, and `inputSchema`/`outputSchema`, which must be valid JSON Schema 2020-12). Takes effect after republishing."
      )
      .pipe(scope("apps:write"))
  )
  .add(
    HttpApiEndpoint.post("publish", "/apps/:id/publish")
      .setPath(AppPath)
      .addSuccess(PublishedVersion)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "Publish an App")
      .annotate(
        OpenApi.Description,
        "Copies the draft into the next immutable numbered version, pinning the published version of each member Agent and Flow; a member never published is refused by name."
      )
      .pipe(scope("apps:write"))
  )
  .middleware(Authentication)
  .pipe(gate("apps")) {}

export { AppList }

/** The `apps` group's slice of the contract. */
export const AppsContract = featureContract(AppsApi)
