/** The Agents endpoints of the contract. */
import { featureContract } from "../../platform/http/contract.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../../platform/http/authentication.js"
import { ErrorResponse } from "../../platform/http/error-catalog.js"
import { scope } from "../../platform/http/policy.js"
import { FieldsParam, ListOf, listQuery, Narrowable } from "../../platform/pagination.js"
import { AgentSummary } from "./domain.js"

const AgentList = ListOf("agents", Narrowable(AgentSummary, "AgentListItem")).annotations({ identifier: "AgentList" })

/** `/agents` */
export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("list", "/agents")
      .setUrlParams(listQuery({ fields: FieldsParam }))
      .addSuccess(AgentList)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List published Agents")
      .annotate(OpenApi.Description, "The id, name and description of each published Agent, oldest first.")
      .pipe(scope("agents:read"))
  )
  .middleware(Authentication) {}

export { AgentList }

/** The `agents` group's slice of the contract. */
export const AgentsContract = featureContract(AgentsApi)
