/**
 * Child process of the benchmark: starts the svc server on a data directory with the per-key rate
 * limit raised (so a load test measures the server, not 429s), prepares `--post-orgs` Agency
 * organizations per server of the POST benchmark (200 creates each), and prints one JSON "ready"
 * line on stdout. Exits cleanly (so `--cpu-prof` can write
 * its profile) on SIGTERM, SIGINT or when its stdin closes (the benchmark runner died).
 *
 * A line `caches missing` on stdin makes every `data_version` cache of the server miss from then on
 * (bench/cache-misses.ts), `caches kept` restores them; each is answered with `{"caches":"…"}` on
 * stdout once in effect.
 *
 *   node dist/bench/svc-launcher.js --data-dir DIR [--port 0] [--post-orgs 1] [--database postgres://…]
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { runAdmin } from "../server/admin.js"
import { AccountsService } from "../server/identity/service.js"
import { startServer } from "../server/server.js"
import { answerCacheCommands } from "./cache-misses.js"
import { postOrganization, postServers, type SvcReady } from "./protocol.js"
import { stopOnSignals } from "./launcher-lifecycle.js"

const { values } = parseArgs({
  options: { "data-dir": { type: "string" }, port: { type: "string", default: "0" }, "post-orgs": { type: "string", default: "1" }, database: { type: "string" } }
})
const dataDir = values["data-dir"]
if (!dataDir) throw new Error("--data-dir is required")

const database = values.database
const server = await startServer({
  dataDir,
  database,
  host: "127.0.0.1",
  port: Number(values.port),
  requestsPerMinute: 1_000_000_000
})

stopOnSignals(server)

answerCacheCommands()

if (!server.bootstrapKey) throw new Error(`${dataDir} is not a fresh data directory: no bootstrap key was made`)

const postKeys = await runAdmin(
  { dataDir, database },
  Effect.gen(function* () {
    const accounts = yield* AccountsService
    const keys = { svc: [] as Array<string>, baseline: [] as Array<string> }
    for (const server of postServers) {
      for (let index = 0; index < Number(values["post-orgs"]); index++) {
        const slug = postOrganization(server, index)
        yield* accounts.createOrganization({ slug, plan: "agency" })
        keys[server].push((yield* accounts.createKey(slug, { name: "bench", scopes: "all" })).secret)
      }
    }
    return keys satisfies SvcReady["postKeys"]
  })
)

const ready: SvcReady = {
  ready: true,
  pid: process.pid,
  origin: server.origin,
  baseUrl: server.baseUrl,
  bootstrapKey: server.bootstrapKey,
  postKeys
}
process.stdout.write(`${JSON.stringify(ready)}\n`)
