/** The plan catalog endpoint of the contract. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../../http/authentication.js"
import { featureContract } from "../../http/contract.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { ListOf, listQuery } from "../../platform/pagination.js"
import { TierPlan } from "./domain.js"

/** `/tier-plans` */
export class TierPlansApi extends HttpApiGroup.make("tierPlans")
  .annotate(OpenApi.Description, "The tier plans end users can be given.")
  .add(
    HttpApiEndpoint.get("list", "/tier-plans")
      .setUrlParams(listQuery({}))
      .addSuccess(ListOf("tierPlans", TierPlan).annotations({ identifier: "TierPlanList" }))
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List tier plans")
      .annotate(
        OpenApi.Description,
        "The organization's plan catalog, oldest first, archived plans included (`archived: true`; they are `tier_not_found` for new provisioning). Plans are created with `svc plans create`."
      )
      .pipe(scope("end_users:read"))
  )
  .middleware(Authentication) {}

/** The `tierPlans` group's slice of the contract. */
export const TierPlansContract = featureContract(TierPlansApi)
