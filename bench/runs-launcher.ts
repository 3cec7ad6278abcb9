/**
 * Child process of the runs benchmark: starts svc with the demo content, the given OpenAI-compatible
 * model endpoint, no rate limit in the way and credits for every run, and prints one JSON ready
 * line (`RunsReady`). Exits cleanly on SIGTERM, SIGINT or when its stdin closes.
 *
 *   node dist/bench/runs-launcher.js --data-dir DIR --model-url URL
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { AccountsService } from "../server/identity/service.js"
import type { RunsReady } from "./protocol.js"
import { startDemoWithModel, stopOnSignals } from "./launcher-lifecycle.js"

const { values } = parseArgs({ options: { "data-dir": { type: "string" }, "model-url": { type: "string" } } })
if (!values["data-dir"] || !values["model-url"]) throw new Error("--data-dir and --model-url are required")

const server = await startDemoWithModel(values["data-dir"], values["model-url"])

const { runAdmin } = await import("../server/admin.js")
await runAdmin(
  server.dataDir,
  Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { credits: 1_000_000_000 }))
)

stopOnSignals(server)

const ready: RunsReady = {
  ready: true,
  pid: process.pid,
  origin: server.origin,
  baseUrl: server.baseUrl,
  bootstrapKey: server.bootstrapKey,
  demoAgentId: server.demo.agentId,
  knowledgebaseId: server.demo.knowledgebaseId
}
process.stdout.write(`${JSON.stringify(ready)}\n`)
