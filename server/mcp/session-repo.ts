/**
 * The SQL of `mcp_connections` (migration 0024): the MCP sessions of Streamable HTTP kept in the
 * database so that any instance on one PostgreSQL database serves them (`session-store.ts`). Each
 * statement is one round trip outside any transaction; `last_used` is on the database's clock.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isoAt } from "../platform/clock.js"
import { databaseNowMs } from "../platform/instances/registry.js"
import { declareWrites, writing } from "../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const mcpConnectionsWrites = declareWrites("mcp_connections")

/** A stored session: who opened it, where, with what `initialize` params, and how long it has been idle. */
export interface StoredMcpConnection {
  readonly keyId: string
  readonly address: string
  /** The `initialize` request's params, as JSON. */
  readonly initialize: string
  readonly idleMs: number
}

/** The statements on `mcp_connections`. */
export const mcpConnectionRepo = Effect.map(SqlClient.SqlClient, (sql) => {
  const now = databaseNowMs(sql)
  return {
    /** Stores a session opened now. */
    insert: (id: string, keyId: string, address: string, initialize: string): Effect.Effect<void> =>
      sql`INSERT INTO mcp_connections (id, key_id, address, initialize, created_at, last_used)
        VALUES (${id}, ${keyId}, ${address}, ${initialize}, ${isoAt(Date.now())}, ${now})`.pipe(writing(mcpConnectionsWrites), Effect.asVoid, Effect.orDie),

    /** A stored session, or null. */
    find: (id: string): Effect.Effect<StoredMcpConnection | null> =>
      sql<{ key_id: string; address: string; initialize: string; idle_ms: number }>`SELECT key_id, address, initialize, ${now} - last_used AS idle_ms
        FROM mcp_connections WHERE id = ${id}`.pipe(
        Effect.map(([row]) => (row === undefined ? null : { keyId: row.key_id, address: row.address, initialize: row.initialize, idleMs: Number(row.idle_ms) })),
        Effect.orDie
      ),

    /** Marks a session used now. */
    touch: (id: string): Effect.Effect<void> =>
      sql`UPDATE mcp_connections SET last_used = ${now} WHERE id = ${id}`.pipe(writing(mcpConnectionsWrites), Effect.asVoid, Effect.orDie),

    /** Forgets a session. */
    remove: (id: string): Effect.Effect<void> =>
      sql`DELETE FROM mcp_connections WHERE id = ${id}`.pipe(writing(mcpConnectionsWrites), Effect.asVoid, Effect.orDie),

    /** Forgets a key's least recently used sessions beyond the newest `keep`; answers their ids. */
    trim: (keyId: string, keep: number): Effect.Effect<ReadonlyArray<string>> =>
      sql<{ id: string }>`DELETE FROM mcp_connections WHERE id IN (
          SELECT id FROM mcp_connections WHERE key_id = ${keyId} ORDER BY last_used DESC, created_at DESC OFFSET ${keep})
        RETURNING id`.pipe(writing(mcpConnectionsWrites), Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie)
  }
})
