/**
 * Migration 0022: execution traces (issue 25). One row per finished execution holding its trace
 * (`server/runtime/trace.ts`: timed spans of model calls, tool calls, an App's routing decision, a
 * transaction's validation) as JSON text, written in the transaction that finishes the execution
 * and read only by `GET /executions/{id}?view=full` and MCP's `get_execution` in full view. A
 * table of its own rather than a column, so that `executions` rows stay as small as before for
 * every other read; it goes with its execution.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS execution_traces (
    execution_id TEXT PRIMARY KEY REFERENCES executions(id) ON DELETE CASCADE,
    trace TEXT NOT NULL
  ) STRICT`
})
