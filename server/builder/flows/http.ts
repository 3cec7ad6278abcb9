/**
 * HTTP handlers of the Flows endpoints: thin adapters over `FlowService`. The create and the draft
 * edit read their body as sent (`readJsonBody`) rather than through the declared schema, so the
 * service's check names every problem of a definition in one 400 instead of the first decode
 * failure; their declared payloads describe the body in the document.
 */
import { Effect } from "effect"
import { CurrentPrincipal } from "../../http/authentication.js"
import { readJsonBody } from "../../http/request-body.js"
import { declaredAnswer, idempotentCreate } from "../../http/responses.js"
import { parseFields, project } from "../../platform/pagination.js"
import { draftListFields } from "../versions/domain.js"
import { FlowsContract } from "./api.js"
import { flowFields } from "./domain.js"
import { FlowService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** A created Flow as `create` declares it (stored for idempotent replays). */
const createdFlow = declaredAnswer(FlowsContract.groups["flows"]!.endpoints["create"]!.successSchema)

/** Handlers of the `flows` group. */
export const FlowsHttpLive = serveGroup(FlowsContract, "flows", (handlers) =>
  Effect.gen(function* () {
    const flows = yield* FlowService
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const includeDrafts = urlParams.include === "drafts"
          const fields = yield* parseFields(urlParams.fields, includeDrafts ? draftListFields : flowFields)
          const page = yield* flows.list(yield* CurrentPrincipal, {
            includeDrafts,
            updatedSince: urlParams.updatedSince ?? null,
            limit: urlParams.limit,
            cursor: urlParams.cursor
          })
          return { flows: page.items.map((flow) => project(flow, fields)), nextCursor: page.nextCursor }
        })
      )
      .handleRaw("create", ({ headers, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          const body = yield* readJsonBody(request)
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload: body },
            Effect.map(flows.create(actor, body), (flow) => ({ flow })),
            createdFlow
          )
        })
      )
      .handle("get", ({ path }) => Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => flows.get(actor, path.id)), (flow) => ({ flow })))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => flows.remove(actor, path.id)))
      .handle("getDraft", ({ path }) =>
        Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => flows.draft(actor, path.id)), (flow) => ({ flow }))
      )
      .handleRaw("updateDraft", ({ path, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          const flow = yield* flows.updateDraft(actor, path.id, yield* readJsonBody(request))
          return { flow }
        })
      )
      .handle("publish", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => flows.publish(actor, path.id)))
  })
)
