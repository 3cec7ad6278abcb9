/** The Apps endpoints of the contract. */
import { featureContract } from "../../platform/http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../platform/http/authentication.js"
import { ErrorResponse } from "../../platform/http/error-catalog.js"
import { gate, scope } from "../../platform/http/policy.js"
import { FieldsParam, ListOf, listQuery, Narrowable, UpdatedSinceParam } from "../../platform/pagination.js"
import { AppDraftItem, PublishedApp } from "./domain.js"

/** An App of either listing; a property of the other listing's shape never matches (so none is dropped). */
const noOtherProperties = { parseOptions: { onExcessProperty: "error" } } as const
const AppList = ListOf(
  "apps",
  Schema.Union(
    Narrowable(PublishedApp, "PublishedAppListItem").annotations(noOtherProperties),
    Narrowable(AppDraftItem, "AppDraftListItem").annotations(noOtherProperties)
  )
).annotations({ identifier: "AppList" })

/** `/apps`: answers 403 `api_disabled` until the organization's `apps` gate is on. */
export class AppsApi extends HttpApiGroup.make("apps")
  .add(
    HttpApiEndpoint.get("list", "/apps")
      .setUrlParams(
        listQuery({
          include: Schema.optional(
            Schema.Literal("drafts").annotations({ description: "`drafts` lists every App with `published`; needs `apps:write`." })
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
  .middleware(Authentication)
  .pipe(gate("apps")) {}

export { AppList }

/** The `apps` group's slice of the contract. */
export const AppsContract = featureContract(AppsApi)
