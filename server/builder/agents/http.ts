/** HTTP handlers of the Agents endpoints: thin adapters over `AgentService`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AgentsContract, AppsContract } from "./api.js"
import { CurrentPrincipal } from "../../platform/http/authentication.js"
import { parseFields, project } from "../../platform/pagination.js"
import { AppService } from "../apps/service.js"
import { agentFields, draftAppFields, publishedAppFields } from "./domain.js"
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

/** Handlers of the `apps` group. */
export const AppsHttpLive = HttpApiBuilder.group(AppsContract, "apps", (handlers) =>
  Effect.gen(function* () {
    const apps = yield* AppService
    return handlers.handle("list", ({ urlParams }) =>
      Effect.gen(function* () {
        const includeDrafts = urlParams.include === "drafts"
        const fields = yield* parseFields(urlParams.fields, includeDrafts ? draftAppFields : publishedAppFields)
        const page = yield* apps.list(yield* CurrentPrincipal, {
          includeDrafts,
          updatedSince: urlParams.updatedSince ?? null,
          limit: urlParams.limit,
          cursor: urlParams.cursor
        })
        return { apps: page.items.map((app) => project(app, fields)), nextCursor: page.nextCursor }
      })
    )
  })
)
