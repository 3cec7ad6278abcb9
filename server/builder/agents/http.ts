/** HTTP handlers of the Agents endpoints: thin adapters over `AgentService`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AgentsContract } from "./api.js"
import { CurrentPrincipal } from "../../platform/http/authentication.js"
import { parseFields, project } from "../../platform/pagination.js"
import { agentFields } from "./domain.js"
import { AgentService } from "./service.js"

/** Handlers of the `agents` group. */
export const AgentsHttpLive = HttpApiBuilder.group(AgentsContract, "agents", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* AgentService
    return handlers.handle("list", ({ urlParams }) =>
      Effect.gen(function* () {
        const fields = yield* parseFields(urlParams.fields, agentFields)
        const page = yield* agents.listPublished(yield* CurrentPrincipal, urlParams)
        return { agents: page.items.map((agent) => project(agent, fields)), nextCursor: page.nextCursor }
      })
    )
  })
)
