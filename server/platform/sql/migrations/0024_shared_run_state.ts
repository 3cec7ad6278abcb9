/**
 * Migration 0024 (issue 24): state that instances on one PostgreSQL database share instead of
 * keeping in memory.
 *
 * - `conversation_locks`: which instance (`claimed_by`, a `service_instances` id) runs a turn of a
 *   conversation now, with the hold's own `token`; one row per conversation while a turn holds it.
 *   A row whose instance is gone is taken over by the next turn (`runs/lease-repo.ts`).
 * - `mcp_connections`: the MCP sessions of Streamable HTTP (connections, `server/mcp/http.ts`; not
 *   the sign-in's `mcp_sessions`) opened by `initialize`: the key and address that opened each, the `initialize` request's params (protocol version, capabilities, client
 *   info) an instance that did not open it replays to serve it, and when it was last used
 *   (milliseconds on the database's clock; idle sessions expire).
 *
 * SQLite (one instance) has the tables and does not use them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS conversation_locks (
    conversation_id TEXT PRIMARY KEY,
    claimed_by TEXT NOT NULL,
    token TEXT NOT NULL,
    taken_at INTEGER NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE IF NOT EXISTS mcp_connections (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    address TEXT NOT NULL,
    initialize TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used INTEGER NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX IF NOT EXISTS mcp_connections_key ON mcp_connections (key_id, last_used)`
})
