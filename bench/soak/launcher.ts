/**
 * Child process of the reliability suite: starts svc on a data directory (or, with `--database`,
 * on that database) with a raised per-key rate (a test-only setting, so the fuzz measures the
 * server and not 429s), prepares the two organizations of the suite on a fresh start, and prints
 * one JSON ready line (`SoakReady`). A restart on the same data prints `organizations: null`.
 * A line `review on <slug>` (or `off`) on stdin switches that organization's review gate and is
 * answered with `{"review":"on"|"off"}` (or `{"review":"failed"}`) once in effect.
 *
 *   node dist/bench/soak/launcher.js --data-dir DIR [--database URL] [--port N] [--requests-per-minute N]
 */
import { Effect } from "effect"
import { createInterface } from "node:readline"
import { parseArgs } from "node:util"
import { runAdmin } from "../../server/admin.js"
import { AccountsService } from "../../server/identity/service.js"
import { TierPlanService } from "../../server/provisioning/plans/service.js"
import { PortalService } from "../../server/provisioning/portals/service.js"
import { startServer } from "../../server/server.js"
import { stopOnSignals } from "../launcher-lifecycle.js"
import { type SoakOrganization, soakOrganizations, type SoakReady } from "./protocol.js"

const { values } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    database: { type: "string" },
    port: { type: "string", default: "0" },
    "requests-per-minute": { type: "string", default: "1000000000" }
  }
})
const dataDir = values["data-dir"]
if (!dataDir) throw new Error("--data-dir is required")
const server = await startServer({
  dataDir,
  ...(values.database ? { database: values.database } : {}),
  host: "127.0.0.1",
  port: Number(values.port),
  requestsPerMinute: Number(values["requests-per-minute"])
})
stopOnSignals(server)

/** Makes one organization of the suite: an organization key, an admin's personal key, a plan and a Portal. */
const prepare = (slug: string) =>
  Effect.gen(function* () {
    const accounts = yield* AccountsService
    const org = yield* accounts.createOrganization({ slug, plan: "agency", gates: ["apps", "groups", "mcp"] })
    yield* accounts.setOrganization(slug, { credits: 1_000_000_000 })
    const orgKey = (yield* accounts.createKey(slug, { name: "soak", scopes: "all" })).secret
    yield* accounts.addMember(slug, `admin@${slug}.test`, "admin")
    const personalKey = (yield* accounts.createKey(slug, { name: "soak personal", scopes: "all", personalFor: `admin@${slug}.test` })).secret
    const plan = yield* Effect.flatMap(TierPlanService, (plans) => plans.create(org.id, { name: `${slug} plan`, creditAllowance: 1_000 }))
    const portal = yield* Effect.flatMap(PortalService, (portals) => portals.create(org.id, { name: `${slug} portal` }))
    const prepared: SoakOrganization = {
      id: org.id,
      slug,
      orgKey,
      personalKey,
      tierPlanId: plan.id,
      planGroupId: plan.groupId,
      portalId: portal.id
    }
    return prepared
  })

/** Administration acts on the server's own database: the data directory's file, or the PostgreSQL URL. */
const adminTarget = { dataDir, database: values.database }

const organizations =
  server.bootstrapKey === null
    ? null
    : await runAdmin(
        adminTarget,
        Effect.all(soakOrganizations.map(prepare)).pipe(Effect.map(([a, b]) => ({ a: a!, b: b! })))
      )

const ready: SoakReady = { ready: true, pid: process.pid, origin: server.origin, baseUrl: server.baseUrl, organizations }
process.stdout.write(`${JSON.stringify(ready)}\n`)

createInterface({ input: process.stdin }).on("line", (line) => {
  const command = /^review (on|off) ([a-z0-9-]+)$/.exec(line.trim())
  if (!command) return
  const [, state, slug] = command as unknown as [string, "on" | "off", string]
  void runAdmin(
    adminTarget,
    Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, state === "on" ? { enable: ["review"] } : { disable: ["review"] }))
  ).then(
    () => process.stdout.write(`${JSON.stringify({ review: state })}\n`),
    () => process.stdout.write(`${JSON.stringify({ review: "failed" })}\n`)
  )
})
