/**
 * Where MCP sessions live beyond the instance that opened them (issue 24). On PostgreSQL, every
 * session opened by `initialize` is stored (`mcp_connections`: its key, address and `initialize`
 * params) before its id is answered, so any instance serves it: an instance that does not hold the
 * session's objects in memory builds them again by replaying the stored `initialize`
 * (`http.ts`). Each request in a session reads its row (one round trip): a session deleted or expired
 * through any instance is 404 on every instance from the next request; its use is written at most
 * once a minute. The most sessions per key count across instances, the least recently used
 * forgotten. On SQLite (one instance) nothing is stored: sessions live in memory, as before.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { DatabaseBackend } from "../platform/sql/dialect.js"
import { mcpConnectionRepo, type StoredMcpConnection } from "./session-repo.js"

/** How often a session's use is written (the idle expiry is counted from it). */
export const touchEveryMs = 60_000

/** The sessions' shared store. */
export interface McpSessionStore {
  /** Whether sessions are stored (PostgreSQL); when false every method does nothing. */
  readonly shared: boolean
  /** Stores a session just opened, then forgets the key's least recently used beyond `keep`; answers the ids forgotten. */
  readonly opened: (id: string, keyId: string, address: string, initialize: unknown, keep: number) => Effect.Effect<ReadonlyArray<string>>
  /** The stored session, or null when there is none or it was idle longer than `idleMs` (then forgotten). Marks it used when due. */
  readonly lookup: (id: string, idleMs: number) => Effect.Effect<StoredMcpConnection | null>
  /** Forgets a session (deleted by its client). */
  readonly closed: (id: string) => Effect.Effect<void>
}

const inMemoryOnly: McpSessionStore = {
  shared: false,
  opened: () => Effect.succeed([]),
  lookup: () => Effect.succeed(null),
  closed: () => Effect.void
}

/** The store of this backend. */
export const mcpSessionStore: Effect.Effect<McpSessionStore, never, DatabaseBackend | SqlClient.SqlClient> = Effect.gen(function* () {
  const backend = yield* DatabaseBackend
  if (backend.dialect !== "pg") return inMemoryOnly
  const repo = yield* mcpConnectionRepo
  return {
    shared: true,
    opened: (id, keyId, address, initialize, keep) =>
      Effect.zipRight(repo.insert(id, keyId, address, JSON.stringify(initialize ?? {})), repo.trim(keyId, keep)),
    lookup: (id, idleMs) =>
      Effect.flatMap(repo.find(id), (stored) => {
        if (stored === null) return Effect.succeed(null)
        if (stored.idleMs > idleMs) return Effect.as(repo.remove(id), null)
        return stored.idleMs >= touchEveryMs ? Effect.as(repo.touch(id), stored) : Effect.succeed(stored)
      }),
    closed: (id) => repo.remove(id)
  }
})
