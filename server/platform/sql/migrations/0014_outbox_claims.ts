/**
 * Migration 0014: a claim on an outbox email's attempt. `claimed_until` is set when a process takes
 * an attempt and cleared when it records the outcome; while it is in the future no other process
 * (another instance on one PostgreSQL database) may take the email, and once it passes (the process
 * stopped mid-send) the next attempt may be taken when due.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE outbox_emails ADD COLUMN claimed_until TEXT`
})
