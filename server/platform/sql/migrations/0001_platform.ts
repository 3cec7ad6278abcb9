/** Migration 0001: settings, organizations, members, API keys, idempotency records, Knowledgebases, Agents. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    plan TEXT NOT NULL CHECK (plan IN ('trial', 'creator', 'pro', 'agency', 'lifetime')),
    gates TEXT NOT NULL DEFAULT '[]',
    credits_remaining INTEGER NOT NULL CHECK (credits_remaining >= 0),
    credits_used INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE members (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    email TEXT NOT NULL COLLATE NOCASE,
    role TEXT NOT NULL CHECK (role IN ('viewer', 'member', 'admin')),
    created_at TEXT NOT NULL,
    removed_at TEXT
  ) STRICT`
  yield* sql`CREATE UNIQUE INDEX members_active_email ON members (organization_id, email) WHERE removed_at IS NULL`
  yield* sql`CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('organization', 'personal')),
    member_id TEXT REFERENCES members(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT,
    CHECK ((kind = 'personal') = (member_id IS NOT NULL))
  ) STRICT`
  yield* sql`CREATE INDEX api_keys_organization ON api_keys (organization_id, kind, revoked_at)`
  yield* sql`CREATE INDEX api_keys_member ON api_keys (member_id) WHERE member_id IS NOT NULL`
  yield* sql`CREATE TABLE idempotency_keys (
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'done')),
    status INTEGER,
    body TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (organization_id, address, key)
  ) STRICT`
  yield* sql`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`
  yield* sql`CREATE TABLE knowledgebases (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    pages_count INTEGER NOT NULL DEFAULT 0,
    sources_count INTEGER NOT NULL DEFAULT 0,
    created_by_key_id TEXT REFERENCES api_keys(id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX knowledgebases_organization ON knowledgebases (organization_id, created_at, id)`
  yield* sql`CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    published_version INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX agents_organization ON agents (organization_id, created_at, id)`
})
