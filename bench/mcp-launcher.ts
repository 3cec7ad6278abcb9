/**
 * Child process of the MCP benchmark: starts svc with the demo content, no rate limit in the way,
 * credits for every search, and an admin member with a personal key; prints one JSON ready line
 * (`McpReady`). Exits cleanly on SIGTERM, SIGINT or when its stdin closes.
 *
 *   node dist/bench/mcp-launcher.js --data-dir DIR
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { PageService } from "../server/knowledge/pages/service.js"
import { AccountsService } from "../server/platform/accounts/service.js"
import { startServer } from "../server/server.js"
import type { McpReady } from "./protocol.js"
import { stopOnSignals } from "./launcher-lifecycle.js"

const { values } = parseArgs({ options: { "data-dir": { type: "string" } } })
if (!values["data-dir"]) throw new Error("--data-dir is required")

const server = await startServer({ dataDir: values["data-dir"], host: "127.0.0.1", port: 0, requestsPerMinute: 1_000_000_000, demo: true })
if (!server.bootstrapKey || !server.demo) throw new Error(`${values["data-dir"]} is not a fresh data directory`)
const demo = server.demo

const { runAdmin } = await import("../server/admin.js")
const { personalKey, pageId } = await runAdmin(
  server.dataDir,
  Effect.gen(function* () {
    const accounts = yield* AccountsService
    yield* accounts.setOrganization("default", { credits: 1_000_000_000, enable: ["mcp", "apps"] })
    yield* accounts.addMember("default", "bench@svc.local", "admin")
    const created = yield* accounts.createKey("default", { name: "bench mcp", scopes: "all", personalFor: "bench@svc.local" })
    const actor = yield* accounts.authenticate(created.secret)
    const index = yield* (yield* PageService).index(actor, demo.knowledgebaseId, { limit: 50 })
    const page = index.items.find((item) => !item.isFolder)
    if (!page) throw new Error("the demo has no page")
    return { personalKey: created.secret, pageId: page.id }
  })
)

stopOnSignals(server)

const ready: McpReady = {
  ready: true,
  pid: process.pid,
  origin: server.origin,
  baseUrl: server.baseUrl,
  mcpUrl: server.mcpUrl,
  personalKey,
  knowledgebaseId: demo.knowledgebaseId,
  pageId
}
process.stdout.write(`${JSON.stringify(ready)}\n`)
