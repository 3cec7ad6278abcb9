/**
 * Child process of the Portal benchmark: starts svc with no rate limit in the way, creates the
 * measured Portal (its signup webhook enabled towards `--webhook-url`) and a warm-up Portal without
 * a webhook, seeds `--people` and `--warmup` active end users of organization `default` by direct
 * SQL, and prints one JSON ready line (`PortalReady`). On the stdin line `backlog N` it records N
 * `end_user.signup` events (for addresses `backlog<n>@example.com`) in one transaction from the
 * admin side, so the running server's worker finds them at its next poll, and prints
 * `{"backlog": N, "enqueuedAt": <ms>}`. Exits cleanly on SIGTERM, SIGINT or when its stdin closes.
 *
 *   node dist/bench/portal-launcher.js --data-dir DIR --webhook-url URL [--people 2000] [--warmup 200]
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { createInterface } from "node:readline"
import { parseArgs } from "node:util"
import { databaseFile } from "../server/platform/sql/database.js"
import { PortalService } from "../server/provisioning/portals/service.js"
import { startServer } from "../server/server.js"
import { WebhookService } from "../server/webhooks/service.js"
import { stopOnSignals } from "./launcher-lifecycle.js"
import type { PortalReady } from "./protocol.js"

const { values } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    "webhook-url": { type: "string" },
    people: { type: "string", default: "2000" },
    warmup: { type: "string", default: "200" }
  }
})
if (!values["data-dir"] || !values["webhook-url"]) throw new Error("--data-dir and --webhook-url are required")
const people = Number(values.people)
const warmup = Number(values.warmup)
const webhookUrl = values["webhook-url"]

const server = await startServer({ dataDir: values["data-dir"], host: "127.0.0.1", port: 0, requestsPerMinute: 1_000_000_000 })
if (!server.organization) throw new Error(`${values["data-dir"]} is not a fresh data directory`)
const orgId = server.organization.id

/** Rows of active end users `<prefix><n>@example.com`. */
const endUserRows = (prefix: string, count: number) => {
  const at = new Date().toISOString()
  return Array.from({ length: count }, (_, n) => ({
    id: randomUUID(),
    organization_id: orgId,
    email: `${prefix}${n}@example.com`,
    email_key: `${prefix}${n}@example.com`,
    full_name: `${prefix} ${n}`,
    state: "active",
    created_at: at,
    updated_at: at
  }))
}

const { runAdmin } = await import("../server/admin.js")
const setUp = await runAdmin(
  server.dataDir,
  Effect.gen(function* () {
    const portals = yield* PortalService
    const webhooks = yield* WebhookService
    const sql = yield* SqlClient.SqlClient
    const portal = yield* portals.create(orgId, { name: "Bench Portal" })
    const warmupPortal = yield* portals.create(orgId, { name: "Warm-up Portal" })
    const configured = yield* webhooks.configure(orgId, portal.id, { url: webhookUrl, enabled: true })
    if (configured.secret === null) return yield* Effect.dieMessage("the first enable made no signing secret")
    const rows = [...endUserRows("person", people), ...endUserRows("warmup", warmup)]
    for (let i = 0; i < rows.length; i += 500) yield* sql`INSERT INTO end_users ${sql.insert(rows.slice(i, i + 500))}`
    return { portalId: portal.id, warmupPortalId: warmupPortal.id, webhookSecret: configured.secret }
  })
)

/** Records `count` signup events at the measured Portal in one transaction; answers when it committed. */
const enqueueBacklog = (portal: { readonly id: string; readonly name: string }, count: number) =>
  runAdmin(
    server.dataDir,
    Effect.gen(function* () {
      const webhooks = yield* WebhookService
      const sql = yield* SqlClient.SqlClient
      const createdAt = new Date().toISOString()
      yield* sql.withTransaction(
        Effect.forEach(
          Array.from({ length: count }, (_, n) => n),
          (n) =>
            webhooks.enqueueSignup({
              organizationId: orgId,
              portal,
              endUser: { id: randomUUID(), email: `backlog${n}@example.com`, createdAt, fullName: null }
            }),
          { discard: true }
        )
      )
      return Date.now()
    })
  )

createInterface({ input: process.stdin }).on("line", (line) => {
  const command = /^backlog (\d+)$/.exec(line.trim())
  if (!command) return
  const count = Number(command[1])
  enqueueBacklog({ id: setUp.portalId, name: "Bench Portal" }, count).then(
    (enqueuedAt) => process.stdout.write(`${JSON.stringify({ backlog: count, enqueuedAt })}\n`),
    (error: unknown) => process.stdout.write(`${JSON.stringify({ backlog: count, error: String(error) })}\n`)
  )
})

stopOnSignals(server)

const ready: PortalReady = {
  ready: true,
  pid: process.pid,
  origin: server.origin,
  baseUrl: server.baseUrl,
  ...setUp,
  people,
  warmup,
  databaseFile: databaseFile(server.dataDir)
}
process.stdout.write(`${JSON.stringify(ready)}\n`)
