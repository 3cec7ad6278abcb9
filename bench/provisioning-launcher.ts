/**
 * Child process of the provisioning benchmark: starts svc with no rate limit in the way, makes two
 * plans, two groups and 20 keys (the bootstrap key and 19 more) in organization `default`, seeds organization `bench-paging` with
 * `--accounts` end users by direct SQL (in batches), and prints one JSON ready line
 * (`ProvisioningReady`). Exits cleanly on SIGTERM, SIGINT or when its stdin closes.
 *
 *   node dist/bench/provisioning-launcher.js --data-dir DIR [--accounts 100000]
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { parseArgs } from "node:util"
import { AccountsService } from "../server/identity/service.js"
import { TierPlanService } from "../server/provisioning/plans/service.js"
import { startServer } from "../server/server.js"
import type { ProvisioningReady } from "./protocol.js"
import { stopOnSignals } from "./launcher-lifecycle.js"

const { values } = parseArgs({ options: { "data-dir": { type: "string" }, accounts: { type: "string", default: "100000" } } })
if (!values["data-dir"]) throw new Error("--data-dir is required")
const accounts = Number(values.accounts)

const server = await startServer({ dataDir: values["data-dir"], host: "127.0.0.1", port: 0, requestsPerMinute: 1_000_000_000 })
if (!server.bootstrapKey || !server.organization) throw new Error(`${values["data-dir"]} is not a fresh data directory`)
const orgId = server.organization.id

const { runAdmin } = await import("../server/admin.js")
const setUp = await runAdmin(
  server.dataDir,
  Effect.gen(function* () {
    const admin = yield* AccountsService
    const plans = yield* TierPlanService
    const sql = yield* SqlClient.SqlClient
    const gold = yield* plans.create(orgId, { name: "Bench Gold", creditAllowance: 1_000 })
    const silver = yield* plans.create(orgId, { name: "Bench Silver", creditAllowance: 100 })
    const at = new Date().toISOString()
    const groupIds = [randomUUID(), randomUUID()] as const
    for (const [i, id] of groupIds.entries()) {
      yield* sql`INSERT INTO user_groups (id, organization_id, name, description, plan_id, created_at, updated_at)
        VALUES (${id}, ${orgId}, ${`Bench group ${i}`}, NULL, NULL, ${at}, ${at})`
    }
    // The bootstrap key and 19 more: the 20 active organization keys an organization may have.
    const keys: Array<string> = [server.bootstrapKey!]
    for (let i = 1; i < 20; i++) keys.push((yield* admin.createKey("default", { name: `bench ${i}`, scopes: "all" })).secret)
    const paging = yield* admin.createOrganization({ slug: "bench-paging", plan: "agency" })
    const pagingKey = (yield* admin.createKey("bench-paging", { name: "bench paging", scopes: "all" })).secret
    const start = Date.parse("2026-01-01T00:00:00.000Z")
    for (let offset = 0; offset < accounts; offset += 5_000) {
      const rows = Array.from({ length: Math.min(5_000, accounts - offset) }, (_, i) => {
        const n = offset + i
        const created = new Date(start + n * 1_000).toISOString()
        return {
          id: randomUUID(),
          organization_id: paging.id,
          email: `user${n}@example.com`,
          email_key: `user${n}@example.com`,
          full_name: `User ${n}`,
          state: "active",
          created_at: created,
          updated_at: created
        }
      })
      yield* sql.withTransaction(Effect.forEach(chunks(rows, 500), (chunk) => sql`INSERT INTO end_users ${sql.insert(chunk)}`, { discard: true }))
    }
    return { keys, tierPlanIds: [gold.id, silver.id] as const, groupIds, pagingKey }
  })
)

function chunks<A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

stopOnSignals(server)

const ready: ProvisioningReady = {
  ready: true,
  pid: process.pid,
  origin: server.origin,
  baseUrl: server.baseUrl,
  ...setUp,
  pagingAccounts: accounts
}
process.stdout.write(`${JSON.stringify(ready)}\n`)
