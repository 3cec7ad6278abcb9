/**
 * Migration 0023: the organization's conversations and executions as lists (issue 25).
 *
 * Who started a conversation: the API key of the caller that created it (`started_by_key_id`) and,
 * for a personal key or an MCP sign-in, its member (`started_by_member_id`). Conversations created
 * before this keep both null; a Portal's end user is read from `portal_conversations`, as before.
 * Two indexes keep the lists range scans, newest activity first: conversations by
 * `updated_at`, executions by their last activity, `COALESCE(finished_at, started_at)`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Idempotent, as every migration from 0020 on (a later one may run again over it).
  const columns = yield* sql.onDialectOrElse({
    pg: () => sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'conversations'`,
    orElse: () => sql<{ name: string }>`SELECT name FROM pragma_table_info('conversations')`
  })
  const present = new Set(columns.map((column) => column.name))
  if (!present.has("started_by_key_id")) yield* sql`ALTER TABLE conversations ADD COLUMN started_by_key_id TEXT`
  if (!present.has("started_by_member_id")) yield* sql`ALTER TABLE conversations ADD COLUMN started_by_member_id TEXT`
  yield* sql`CREATE INDEX IF NOT EXISTS conversations_activity ON conversations (organization_id, updated_at, id)`
  yield* sql`CREATE INDEX IF NOT EXISTS executions_activity ON executions (organization_id, (COALESCE(finished_at, started_at)), id)`
})
