/** Agents: reads of published Agents. Knows nothing of HTTP. */
import { Effect } from "effect"
import type { Principal } from "../../platform/accounts/domain.js"
import { Cursors } from "../../platform/pagination.js"
import type { AgentSummary } from "./domain.js"
import { AgentRepo } from "./repo.js"

/** Agent operations for a calling principal. */
export class AgentService extends Effect.Service<AgentService>()("svc/AgentService", {
  effect: Effect.gen(function* () {
    const repo = yield* AgentRepo
    const cursors = yield* Cursors
    return {
      /** One page of the organization's published Agents, oldest first. */
      listPublished: (actor: Principal, params: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
        Effect.gen(function* () {
          const list = `agents:${actor.organization.id}`
          const request = yield* cursors.request(list, params)
          const rows = yield* repo.listPublished(actor.organization.id, request)
          const page = cursors.page(list, request, rows, (agent) => [agent.created_at, agent.id])
          return {
            items: page.items.map(({ id, name, description }): AgentSummary => ({ id, name, description })),
            nextCursor: page.nextCursor
          }
        })
    }
  }),
  dependencies: [AgentRepo.Default, Cursors.Default]
}) {}
