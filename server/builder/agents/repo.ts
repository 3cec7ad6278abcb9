/** SQL for Agents. */
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import type { AgentSummary } from "./domain.js"

const selectPublished =
  "SELECT id, name, description, created_at FROM agents WHERE organization_id = ? AND published_version IS NOT NULL"

interface AgentRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly created_at: string
}

/** Agents in SQL. */
export class AgentRepo extends Effect.Service<AgentRepo>()("svc/AgentRepo", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection
    return {
      /** Up to `limit + 1` published Agents after the page position, oldest first (read connection). */
      listPublished: (organizationId: string, page: PageRequest) =>
        Effect.orDie(
          page.after === null
            ? reader.all<AgentRow>(`${selectPublished} ORDER BY created_at, id LIMIT ?`, [organizationId, page.limit + 1])
            : reader.all<AgentRow>(`${selectPublished} AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`, [
                organizationId,
                page.after[0] ?? "",
                page.after[1] ?? "",
                page.limit + 1
              ])
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}

export type { AgentSummary }
