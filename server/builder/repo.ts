/** SQL for Agents. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../platform/pagination.js"
import type { AgentSummary } from "./domain.js"

interface AgentRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly created_at: string
}

/** Agents in SQL. */
export class AgentRepo extends Effect.Service<AgentRepo>()("svc/AgentRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      /** Up to `limit + 1` published Agents after the page position, oldest first. */
      listPublished: (organizationId: string, page: PageRequest) =>
        Effect.orDie(
          (page.after === null
            ? sql<AgentRow>`SELECT id, name, description, created_at FROM agents
                WHERE organization_id = ${organizationId} AND published_version IS NOT NULL
                ORDER BY created_at, id LIMIT ${page.limit + 1}`
            : sql<AgentRow>`SELECT id, name, description, created_at FROM agents
                WHERE organization_id = ${organizationId} AND published_version IS NOT NULL
                AND (created_at, id) > (${page.after[0] ?? ""}, ${page.after[1] ?? ""})
                ORDER BY created_at, id LIMIT ${page.limit + 1}`
          ).pipe(Effect.map((rows) => rows.map((row) => ({ ...row }))))
        )
    }
  })
}) {}

export type { AgentSummary }
