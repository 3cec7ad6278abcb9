/**
 * The External API: one `HttpApi` joined from the features' contracts, from which the server's
 * routes, `GET /openapi.json` and the SDK are all derived.
 */
import { OpenApi } from "@effect/platform"
import { features } from "./features.js"
import { joinContracts } from "./http/contract.js"
import { cleanOpenApi } from "./http/openapi.js"

export { apiPrefix } from "./http/contract.js"

/** The whole External API. */
export const Api = joinContracts(features.map((feature) => feature.contract))
  .annotate(OpenApi.Title, "svc External API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.License, { name: "MIT", url: "https://opensource.org/license/mit" })
  .annotate(
    OpenApi.Description,
    "Agents, Flows, Apps, Knowledgebases and end-user provisioning. Every request carries `Authorization: Bearer <API_KEY>`; every response carries `X-Request-Id`; every error is `{error:{code,message}}`."
  )
  .annotate(OpenApi.Transform, cleanOpenApi)
