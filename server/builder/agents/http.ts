/** HTTP handlers of the Agents endpoints: thin adapters over `AgentService`. */
import { Effect } from "effect"
import { AgentsContract } from "./api.js"
import { CurrentPrincipal } from "../../http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../../http/responses.js"
import { parseFields, project } from "../../platform/pagination.js"
import { draftListFields } from "../versions/domain.js"
import { agentFields } from "./domain.js"
import { AgentService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** A created Agent as `create` declares it (stored for idempotent replays). */
const createdAgent = declaredAnswer(AgentsContract.groups["agents"]!.endpoints["create"]!.successSchema)

/** Handlers of the `agents` group. */
export const AgentsHttpLive = serveGroup(AgentsContract, "agents", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* AgentService
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const includeDrafts = urlParams.include === "drafts"
          const fields = yield* parseFields(urlParams.fields, includeDrafts ? draftListFields : agentFields)
          const page = yield* agents.list(yield* CurrentPrincipal, {
            includeDrafts,
            updatedSince: urlParams.updatedSince ?? null,
            limit: urlParams.limit,
            cursor: urlParams.cursor
          })
          return { agents: page.items.map((agent) => project(agent, fields)), nextCursor: page.nextCursor }
        })
      )
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            Effect.map(agents.create(actor, payload), (agent) => ({ agent })),
            createdAgent
          )
        })
      )
      .handle("get", ({ path }) => Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => agents.get(actor, path.id)), (agent) => ({ agent })))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => agents.remove(actor, path.id)))
      .handle("getDraft", ({ path }) =>
        Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => agents.draft(actor, path.id)), (agent) => ({ agent }))
      )
      .handle("updateDraft", ({ path, payload }) =>
        Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => agents.updateDraft(actor, path.id, payload)), (agent) => ({ agent }))
      )
      .handle("publish", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => agents.publish(actor, path.id)))
  })
)
