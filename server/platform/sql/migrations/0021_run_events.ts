/**
 * Migration 0021: the events of streamed and detached runs (issue 25), so a client can resume a
 * stream with `Last-Event-ID` and anyone allowed can follow a run from any instance. One row per
 * SSE event: its position in the run (`seq`, the event's `id`), its name and JSON data, and when it
 * was recorded (milliseconds since the epoch, for the sweep that keeps them 24 hours).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS run_events (
    execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    data TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, seq)
  ) STRICT`
  yield* sql`CREATE INDEX IF NOT EXISTS run_events_recorded ON run_events (recorded_at)`
})
