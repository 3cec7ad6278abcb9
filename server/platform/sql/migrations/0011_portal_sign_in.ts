/**
 * Migration 0011: sign-in at Portals. One-time codes (`portal_codes`: the HMAC of the code, an
 * expiry, the tries made; a code is spent by its first right answer), Portal sessions
 * (`portal_sessions`: the HMAC of the opaque cookie token, an expiry, ended at sign-out), the
 * conversations an end user holds at a Portal (`portal_conversations`), an end user's first
 * sign-in to the organization (`end_users.first_signed_in_at`, set once), and which credit pool an
 * execution was charged to (`executions.credit_subscription_id` / `credit_pool`: null for the
 * organization's credits; `bonus` or `allowance` of a subscription otherwise), so a run that does
 * not succeed gives the credit back to where it came from.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE portal_codes (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    portal_id TEXT NOT NULL REFERENCES portals(id) ON DELETE CASCADE,
    end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    tries INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX portal_codes_end_user ON portal_codes (portal_id, end_user_id, created_at)`
  yield* sql`CREATE TABLE portal_sessions (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    portal_id TEXT NOT NULL REFERENCES portals(id) ON DELETE CASCADE,
    end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    ended_at TEXT
  ) STRICT`
  yield* sql`CREATE INDEX portal_sessions_end_user ON portal_sessions (end_user_id)`
  yield* sql`CREATE TABLE portal_conversations (
    conversation_id TEXT PRIMARY KEY,
    portal_id TEXT NOT NULL REFERENCES portals(id) ON DELETE CASCADE,
    end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`ALTER TABLE end_users ADD COLUMN first_signed_in_at TEXT`
  yield* sql`ALTER TABLE executions ADD COLUMN credit_subscription_id TEXT`
  yield* sql`ALTER TABLE executions ADD COLUMN credit_pool TEXT CHECK (credit_pool IN ('bonus', 'allowance'))`
})
