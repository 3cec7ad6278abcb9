/**
 * Migration 0025: an execution's trace moves into its own row (`executions.trace`, JSON text,
 * null when none was recorded), written by the statement that finishes the execution, and
 * `execution_traces` (migration 0022) goes, its rows copied first. One row and one key fewer per
 * turn: about 2.3 of a turn's 26 SQLite log pages and one statement (a round trip on PostgreSQL);
 * the column is the last of the row, read only by `view=full` (`docs/decisions.md`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Idempotent, as every migration from 0020 on (a later one may run again over it).
  const columns = yield* sql.onDialectOrElse({
    pg: () => sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'executions'`,
    orElse: () => sql<{ name: string }>`SELECT name FROM pragma_table_info('executions')`
  })
  if (!columns.some((column) => column.name === "trace")) yield* sql`ALTER TABLE executions ADD COLUMN trace TEXT`
  const tables = yield* sql.onDialectOrElse({
    pg: () => sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'execution_traces'`,
    orElse: () => sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'execution_traces'`
  })
  if (tables.length === 0) return
  yield* sql`UPDATE executions SET trace = (SELECT t.trace FROM execution_traces t WHERE t.execution_id = executions.id)
    WHERE id IN (SELECT execution_id FROM execution_traces)`
  yield* sql`DROP TABLE execution_traces`
})
