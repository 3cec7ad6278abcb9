/**
 * Migration 0013: MCP sign-in connections (OAuth 2.1 with PKCE and dynamic client registration).
 * Registered clients (`mcp_oauth_clients`), the one-time email codes of the sign-in page
 * (`mcp_sign_in_codes`: the HMAC of the code, an expiry, the tries made, and once the right code was
 * given the hash of the ticket that lets the member choose a workspace), authorization codes
 * (`mcp_authorization_codes`: hashed, short-lived, single-use, bound to client, redirect URI, PKCE
 * challenge, address and member) and sessions (`mcp_sessions`: one per approval, the hashes of
 * the current access and refresh tokens with their expiries, the address approved, revoked_at,
 * last_used_at). Each session acts through a key row of its own (`api_keys.sign_in = 1`, whose
 * secret nobody holds), so everything that records the acting key keeps working; such rows are
 * never listed or counted as keys.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN sign_in INTEGER NOT NULL DEFAULT 0 CHECK (sign_in IN (0, 1))`
  yield* sql`CREATE TABLE mcp_oauth_clients (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE mcp_sign_in_codes (
    id TEXT PRIMARY KEY,
    email_key TEXT NOT NULL,
    resource TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    tries INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL,
    used_at TEXT,
    choice_hash TEXT UNIQUE,
    chosen_at TEXT,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX mcp_sign_in_codes_email ON mcp_sign_in_codes (email_key, created_at)`
  yield* sql`CREATE TABLE mcp_authorization_codes (
    id TEXT PRIMARY KEY,
    code_hash TEXT NOT NULL UNIQUE,
    client_id TEXT NOT NULL REFERENCES mcp_oauth_clients(id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource TEXT NOT NULL,
    scope TEXT,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    member_id TEXT NOT NULL REFERENCES members(id),
    expires_at INTEGER NOT NULL,
    used_at TEXT,
    session_id TEXT,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE mcp_sessions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    member_id TEXT NOT NULL REFERENCES members(id),
    client_id TEXT NOT NULL REFERENCES mcp_oauth_clients(id) ON DELETE CASCADE,
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    resource TEXT NOT NULL,
    scope TEXT,
    access_hash TEXT NOT NULL UNIQUE,
    access_expires_at INTEGER NOT NULL,
    refresh_hash TEXT NOT NULL UNIQUE,
    refresh_expires_at INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT
  ) STRICT`
  yield* sql`CREATE INDEX mcp_sessions_member ON mcp_sessions (member_id, created_at)`
})
