/** Migration 0002: Apps and their immutable published versions. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE apps (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    published_version INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX apps_organization ON apps (organization_id, created_at, id)`
  yield* sql`CREATE TABLE app_versions (
    app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    conversation_enabled INTEGER NOT NULL DEFAULT 1,
    transaction_enabled INTEGER NOT NULL DEFAULT 0,
    input_schema TEXT,
    output_schema TEXT,
    published_at TEXT NOT NULL,
    PRIMARY KEY (app_id, version)
  ) STRICT`
})
