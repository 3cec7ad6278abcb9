/**
 * Migration 0010: the signup webhook. Each Portal may have one endpoint (`portal_webhooks`: URL,
 * signing secret made on first enable, the Enabled switch). Deliveries are a durable outbox written
 * in the transaction that decides the event: the body is fixed when the event happens, each attempt
 * is signed when it is sent, and a delivery is `pending` until it is `delivered` or has `failed`
 * its attempts. `end_user_id` is unique among signup events, so the event fires once per end user.
 * A worker claims a due delivery with a short lease (`lease_until`) so an attempt cut off by a
 * crash is tried again after a restart.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE portal_webhooks (
    portal_id TEXT PRIMARY KEY REFERENCES portals(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    secret TEXT,
    enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    portal_id TEXT NOT NULL REFERENCES portals(id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    test INTEGER NOT NULL CHECK (test IN (0, 1)),
    end_user_id TEXT,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until INTEGER,
    created_at TEXT NOT NULL,
    finished_at TEXT
  ) STRICT`
  yield* sql`CREATE UNIQUE INDEX webhook_deliveries_signup_once ON webhook_deliveries (end_user_id) WHERE end_user_id IS NOT NULL`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at)`
  yield* sql`CREATE INDEX webhook_deliveries_portal ON webhook_deliveries (portal_id, created_at)`
  yield* sql`CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    manual INTEGER NOT NULL CHECK (manual IN (0, 1)),
    started_at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    PRIMARY KEY (delivery_id, attempt)
  ) STRICT`
})
