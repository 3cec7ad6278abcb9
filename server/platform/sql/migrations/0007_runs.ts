/**
 * Migration 0007: runs. A conversation belongs to one target (an Agent, App or Flow) of an
 * organization and holds its messages in order (`sequence`, unique per conversation, so two turns
 * can never claim one position). Every run is one execution: what ran (kind, target, version or
 * draft), its outcome, steps and tools called (JSON text), the credits it charged and its timings.
 * Targets are not foreign keys: an execution outlives a deleted Agent.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('agent', 'app', 'flow')),
    target_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX conversations_target ON conversations (organization_id, target_kind, target_id)`
  yield* sql`CREATE TABLE executions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('agent', 'flow', 'app', 'transaction')),
    target_id TEXT NOT NULL,
    version INTEGER,
    draft INTEGER NOT NULL CHECK (draft IN (0, 1)),
    conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
    steps TEXT NOT NULL DEFAULT '[]',
    tools_called TEXT NOT NULL DEFAULT '[]',
    credits_charged INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    error TEXT
  ) STRICT`
  yield* sql`CREATE INDEX executions_conversation ON executions (conversation_id, started_at)`
  yield* sql`CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text TEXT NOT NULL,
    execution_id TEXT REFERENCES executions(id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    UNIQUE (conversation_id, sequence)
  ) STRICT`
})
