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
  yield* sql`ALTER TABLE conversations ADD COLUMN started_by_key_id TEXT`
  yield* sql`ALTER TABLE conversations ADD COLUMN started_by_member_id TEXT`
  yield* sql`CREATE INDEX conversations_activity ON conversations (organization_id, updated_at, id)`
  yield* sql`CREATE INDEX executions_activity ON executions (organization_id, (COALESCE(finished_at, started_at)), id)`
})
