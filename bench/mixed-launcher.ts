/**
 * Child process of the mixed benchmark (bench/mixed.ts): starts svc with the demo content, the given
 * OpenAI-compatible model endpoint (bench/fake-model.ts) and no rate limit in the way; gives
 * organization `default` credits for every run and the `mcp` gate, an admin member with a personal
 * key (for the MCP sessions) and a tier plan (for `POST /end-users`); makes `--create-orgs` Agency
 * organizations with a key each (200 keyed creates each); prints one JSON ready line (`MixedReady`).
 * Exits cleanly (so `--cpu-prof` can write its profile) on SIGTERM, SIGINT or when its stdin closes;
 * answers `caches missing` / `caches kept` on its stdin as bench/svc-launcher.ts does.
 *
 *   node dist/bench/mixed-launcher.js --data-dir DIR --model-url URL [--create-orgs 10] [--database postgres://…]
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { PageService } from "../server/knowledge/pages/service.js"
import { AccountsService } from "../server/identity/service.js"
import { TierPlanService } from "../server/provisioning/plans/service.js"
import { answerCacheCommands } from "./cache-misses.js"
import { startDemoWithModel, stopOnSignals } from "./launcher-lifecycle.js"
import type { MixedReady } from "./protocol.js"

const { values } = parseArgs({
  options: { "data-dir": { type: "string" }, "model-url": { type: "string" }, "create-orgs": { type: "string", default: "10" }, database: { type: "string" } }
})
if (!values["data-dir"] || !values["model-url"]) throw new Error("--data-dir and --model-url are required")

const server = await startDemoWithModel(values["data-dir"], values["model-url"], values.database)
const demo = server.demo
const organizationId = server.organization.id

const { runAdmin } = await import("../server/admin.js")
const setUp = await runAdmin(
  { dataDir: server.dataDir, database: values.database },
  Effect.gen(function* () {
    const accounts = yield* AccountsService
    yield* accounts.setOrganization("default", { credits: 1_000_000_000, enable: ["mcp"] })
    yield* accounts.addMember("default", "mixed@svc.local", "admin")
    const personal = yield* accounts.createKey("default", { name: "bench mixed mcp", scopes: "all", personalFor: "mixed@svc.local" })
    const actor = yield* accounts.authenticate(personal.secret)
    const index = yield* (yield* PageService).index(actor, demo.knowledgebaseId, { limit: 50 })
    const page = index.items.find((item) => !item.isFolder)
    if (!page) throw new Error("the demo has no page")
    const plan = yield* (yield* TierPlanService).create(organizationId, { name: "Bench Mixed", creditAllowance: 100 })
    const createKeys: Array<string> = []
    for (let index = 0; index < Number(values["create-orgs"]); index++) {
      const slug = `bench-mixed-${index + 1}`
      yield* accounts.createOrganization({ slug, plan: "agency" })
      createKeys.push((yield* accounts.createKey(slug, { name: "bench", scopes: "all" })).secret)
    }
    return { personalKey: personal.secret, pageId: page.id, tierPlanId: plan.id, createKeys }
  })
)

stopOnSignals(server)
answerCacheCommands()

const ready: MixedReady = {
  ready: true,
  pid: process.pid,
  origin: server.origin,
  baseUrl: server.baseUrl,
  mcpUrl: server.mcpUrl,
  bootstrapKey: server.bootstrapKey,
  knowledgebaseId: demo.knowledgebaseId,
  ...setUp
}
process.stdout.write(`${JSON.stringify(ready)}\n`)
