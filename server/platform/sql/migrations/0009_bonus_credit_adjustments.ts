/**
 * Migration 0009: the ledger of bonus-credit adjustments of subscriptions (amount asked, amount
 * applied after clamping at zero, and the optional reason), gone with its subscription.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE bonus_credit_adjustments (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    amount INTEGER NOT NULL,
    applied INTEGER NOT NULL,
    reason TEXT,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX bonus_credit_adjustments_subscription ON bonus_credit_adjustments (subscription_id, created_at)`
})
