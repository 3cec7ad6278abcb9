/** The Portal admission endpoints of the contract. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { featureContract } from "../../http/contract.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { gate, scope } from "../../http/policy.js"
import { ListOf, listQuery } from "../../platform/pagination.js"
import { Admission, AdmitGroup } from "./domain.js"

const PortalPath = Schema.Struct({ id: Schema.String })
const AdmissionPath = Schema.Struct({ id: Schema.String, groupId: Schema.String })
const admitted = (created: boolean, identifier: string) =>
  Schema.Struct({ ok: Schema.Literal(true), created: Schema.Literal(created), admission: Admission }).annotations({ identifier })

/** `/portals/{id}/admissions`: answers 403 `groups_disabled` until the organization's `groups` gate is on. */
export class PortalAdmissionsApi extends HttpApiGroup.make("portalAdmissions")
  .annotate(OpenApi.Description, "Which user groups each Portal admits.")
  .add(
    HttpApiEndpoint.get("list", "/portals/:id/admissions")
      .setPath(PortalPath)
      .setUrlParams(listQuery({}))
      .addSuccess(ListOf("admissions", Admission).annotations({ identifier: "PortalAdmissionList" }))
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "List the groups a Portal admits")
      .annotate(OpenApi.Description, "Oldest admission first. An unknown Portal is `not_found`.")
      .pipe(scope("end_users:read"))
  )
  .add(
    HttpApiEndpoint.post("admit", "/portals/:id/admissions")
      .setPath(PortalPath)
      .setPayload(AdmitGroup)
      .addSuccess(admitted(true, "PortalAdmissionCreated"), { status: 201 })
      .addSuccess(admitted(false, "PortalAdmissionHeld"))
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.GroupNotFound)
      .annotate(OpenApi.Summary, "Admit a group at a Portal")
      .annotate(
        OpenApi.Description,
        "201 `created: true` for a new admission, 200 `created: false` when the group is admitted already. A plan's group may be admitted (the Portal then admits the plan's holders). An unknown group is 422 `group_not_found`; an unknown Portal 404 `not_found`."
      )
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.del("remove", "/portals/:id/admissions/:groupId")
      .setPath(AdmissionPath)
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true), removed: Schema.Boolean }).annotations({ identifier: "PortalAdmissionRemoved" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Stop admitting a group at a Portal")
      .annotate(OpenApi.Description, "Idempotent: `removed` is false when the group was not admitted. An unknown Portal is `not_found`.")
      .pipe(scope("end_users:write"))
  )
  .middleware(Authentication)
  .pipe(gate("groups")) {}

/** The `portalAdmissions` group's slice of the contract. */
export const PortalAdmissionsContract = featureContract(PortalAdmissionsApi)
