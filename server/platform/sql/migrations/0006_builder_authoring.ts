/**
 * Migration 0006: authoring of Agents, Flows and Apps. Each item keeps its draft on its own row
 * (`name`, `description` and the rest of the definition as JSON text in `draft`); each publish is an
 * immutable numbered row of `<item>_versions` holding a full copy (`definition`, JSON text). An App's
 * version also holds the member Agent and Flow versions it pinned.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agents ADD COLUMN draft TEXT NOT NULL DEFAULT '{}'`
  yield* sql`CREATE TABLE agent_versions (
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    definition TEXT NOT NULL,
    published_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, version)
  ) STRICT`
  yield* sql`CREATE TABLE flows (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    draft TEXT NOT NULL DEFAULT '{}',
    published_version INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX flows_organization ON flows (organization_id, created_at, id)`
  yield* sql`CREATE TABLE flow_versions (
    flow_id TEXT NOT NULL REFERENCES flows(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    definition TEXT NOT NULL,
    published_at TEXT NOT NULL,
    PRIMARY KEY (flow_id, version)
  ) STRICT`
  yield* sql`ALTER TABLE apps ADD COLUMN draft TEXT NOT NULL DEFAULT '{}'`
  yield* sql`ALTER TABLE app_versions ADD COLUMN definition TEXT NOT NULL DEFAULT '{}'`
})
