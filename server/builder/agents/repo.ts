/** SQL for Agents: the versioned-item store over `agents` and `agent_versions`. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { versionedStore } from "../versions/store-repo.js"

/** Agents in SQL. */
export class AgentRepo extends Effect.Service<AgentRepo>()("svc/AgentRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    return versionedStore(sql, reader, { items: "agents", versions: "agent_versions", itemColumn: "agent_id" })
  }),
  dependencies: [ReadConnection.Default]
}) {}
