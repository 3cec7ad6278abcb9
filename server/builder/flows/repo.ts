/** SQL for Flows: the versioned-item store over `flows` and `flow_versions`. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { versionedStore } from "../versions/store-repo.js"

/** Flows in SQL. */
export class FlowRepo extends Effect.Service<FlowRepo>()("svc/FlowRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    return versionedStore(sql, reader, { items: "flows", versions: "flow_versions", itemColumn: "flow_id" })
  }),
  dependencies: [ReadConnection.Default]
}) {}
