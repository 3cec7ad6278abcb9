/** The Portal listing endpoint of the contract. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../../http/authentication.js"
import { featureContract } from "../../http/contract.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { ListOf, listQuery } from "../../platform/pagination.js"
import { Portal } from "./domain.js"

/** `/portals` */
export class PortalsApi extends HttpApiGroup.make("portals")
  .annotate(OpenApi.Description, "The Portals where end users sign in.")
  .add(
    HttpApiEndpoint.get("list", "/portals")
      .setUrlParams(listQuery({}))
      .addSuccess(ListOf("portals", Portal).annotations({ identifier: "PortalList" }))
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List Portals")
      .annotate(OpenApi.Description, "The organization's Portals, oldest first. Portals are created with `svc portals create`.")
      .pipe(scope("end_users:read"))
  )
  .middleware(Authentication) {}

/** The `portals` group's slice of the contract. */
export const PortalsContract = featureContract(PortalsApi)
