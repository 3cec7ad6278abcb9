/**
 * The External API: one `HttpApi` definition from which the server's routes, `GET /openapi.json`
 * and the SDK are all derived.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AgentsApi, AppsApi } from "./builder/api.js"
import { KnowledgeApi } from "./knowledge/api.js"
import { PagesApi } from "./knowledge/pages/api.js"
import { SourcesApi } from "./knowledge/sources/api.js"
import { ErrorResponse } from "./platform/http/error-catalog.js"
import { cleanOpenApi } from "./platform/http/openapi.js"

/** The API root, `{base_url}` without the host. */
export const apiPrefix = "/api/v1"

/** The whole External API. */
export class Api extends HttpApi.make("svc")
  .add(AgentsApi)
  .add(AppsApi)
  .add(KnowledgeApi)
  .add(PagesApi)
  .add(SourcesApi)
  .addError(ErrorResponse.InvalidRequest)
  .addError(ErrorResponse.PayloadTooLarge)
  .addError(ErrorResponse.ServerError)
  .prefix(apiPrefix)
  .annotate(OpenApi.Title, "svc External API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Agents, Flows, Apps, Knowledgebases and end-user provisioning. Every request carries `Authorization: Bearer <API_KEY>`; every response carries `X-Request-Id`; every error is `{error:{code,message}}`."
  )
  .annotate(OpenApi.Transform, cleanOpenApi) {}
