/**
 * Catalog and Portal tools of the provisioning family: the tier plans and Portals (made by
 * administration, listed here) and which user groups each Portal admits, over `TierPlanService`,
 * `PortalService` and `AdmissionService` as their REST handlers call them. Admissions need the
 * `groups` gate, as `/portals/{id}/admissions` does.
 */
import { Effect } from "effect"
import { decodeBody } from "../../platform/request/decode.js"
import { Admission, AdmitGroup } from "../admissions/domain.js"
import { TierPlan } from "../plans/domain.js"
import { Portal } from "./domain.js"
import { AdmissionService } from "../admissions/service.js"
import { TierPlanService } from "../plans/service.js"
import { PortalService } from "./service.js"
import { PortalAdmissionsApi } from "../admissions/api.js"
import { TierPlansApi } from "../plans/api.js"
import { PortalsApi } from "./api.js"
import { operation } from "../../mcp-door/operation.js"
import { itemsOf } from "../../mcp-door/output.js"
import { listArguments } from "../../mcp-door/operation-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../../mcp-door/tool.js"
import { bodyGroupIdOf, fieldNamesOf, groupIdOf, groupInput, portalIdOf, portalInput } from "../mcp-ids.js"
import { fieldsInput } from "../../mcp-door/shared-arguments.js"

const listTierPlansOperation = operation(TierPlansApi, "list")
const listPortalsOperation = operation(PortalsApi, "list")
const listAdmissionsOperation = operation(PortalAdmissionsApi, "list")

/** Why `fields` of a list REST does not narrow is the tool's own. */
const unnarrowedFields = `${fieldsList}; this REST list takes none, the tool narrows its items itself`

const listTierPlans = tool({
  name: "list_tier_plans",
  description: "The organization's plan catalog, oldest first, archived plans included (`archived: true`; they cannot be provisioned).",
  input: { ...listArguments(listTierPlansOperation), fields: fieldsInput(fieldNamesOf(TierPlan)) },
  operation: listTierPlansOperation,
  output: itemsOf(),
  ownArguments: { fields: unnarrowedFields },
  handler: (args, { principal }) =>
    Effect.map(Effect.flatMap(TierPlanService, (plans) => plans.list(principal, { limit: args.limit, cursor: args.cursor })), (page) => itemsPage(page, args.fields))
})

const listPortals = tool({
  name: "list_portals",
  description: "The organization's Portals, oldest first.",
  input: { ...listArguments(listPortalsOperation), fields: fieldsInput(fieldNamesOf(Portal)) },
  operation: listPortalsOperation,
  output: itemsOf(),
  ownArguments: { fields: unnarrowedFields },
  handler: (args, { principal }) =>
    Effect.map(Effect.flatMap(PortalService, (portals) => portals.list(principal, { limit: args.limit, cursor: args.cursor })), (page) => itemsPage(page, args.fields))
})

const listPortalAdmissions = tool({
  name: "list_portal_admissions",
  description: "The user groups a Portal admits, oldest admission first.",
  input: { portalId: portalInput, ...listArguments(listAdmissionsOperation), fields: fieldsInput(fieldNamesOf(Admission)) },
  operation: listAdmissionsOperation,
  output: itemsOf(),
  ownArguments: { portalId: idOrName, fields: unnarrowedFields },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const portalId = yield* portalIdOf(principal, args.portalId)
      const page = yield* (yield* AdmissionService).list(principal, portalId, { limit: args.limit, cursor: args.cursor })
      return itemsPage(page, args.fields)
    })
})

const admitGroup = tool({
  name: "admit_group",
  description:
    "Admit a user group at a Portal (a plan's group too: the Portal then admits the plan's holders). `created` is false when it is admitted already.",
  input: { portalId: portalInput, groupId: groupInput },
  operation: operation(PortalAdmissionsApi, "admit"),
  ownArguments: { portalId: idOrName, groupId: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const portalId = yield* portalIdOf(principal, args.portalId)
      const body = yield* decodeBody(AdmitGroup)({ groupId: yield* bodyGroupIdOf(principal, args.groupId) })
      return yield* (yield* AdmissionService).admit(principal, portalId, body.groupId)
    })
})

const removeAdmission = tool({
  name: "remove_admission",
  description: "Stop admitting a user group at a Portal (idempotent: `removed` is false when it was not admitted).",
  input: { portalId: portalInput, groupId: groupInput },
  operation: operation(PortalAdmissionsApi, "remove"),
  ownArguments: { portalId: idOrName, groupId: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const portalId = yield* portalIdOf(principal, args.portalId)
      const groupId = yield* groupIdOf(principal, args.groupId)
      return yield* (yield* AdmissionService).remove(principal, portalId, groupId)
    })
})

/** The plan, Portal and admission tools. */
export const portalTools = [listTierPlans, listPortals, listPortalAdmissions, admitGroup, removeAdmission] as const
