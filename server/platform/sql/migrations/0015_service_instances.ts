/**
 * Migration 0015: the registry of serving processes and who holds running work. Each `svc serve`
 * (or `svc mcp`) process that claims work has a row in `service_instances` whose `alive_until` (the
 * database's clock, milliseconds since the epoch) its heartbeat keeps moving; `claimed_by` on
 * ingestion jobs and executions names the instance running them. Start-up and periodic recovery
 * take over only work whose instance is gone (no row, or a lease that ran out).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE service_instances (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    alive_until INTEGER NOT NULL
  ) STRICT`
  yield* sql`ALTER TABLE ingestion_jobs ADD COLUMN claimed_by TEXT`
  yield* sql`ALTER TABLE executions ADD COLUMN claimed_by TEXT`
  yield* sql`CREATE INDEX executions_running ON executions (claimed_by) WHERE status = 'running'`
})
