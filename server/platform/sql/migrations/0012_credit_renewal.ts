/**
 * Migration 0012: the monthly renewal of an organization's credits. `credits_renew_at` is when the
 * balance is next set back to the plan's monthly credits; null until the renewal worker first sees
 * the organization (it then takes the next monthly anniversary of the organization's creation).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE organizations ADD COLUMN credits_renew_at TEXT`
})
