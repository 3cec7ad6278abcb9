/**
 * Child process of the MCP benchmark: starts svc with the demo content, no rate limit in the way,
 * credits for every search, and an admin member with a personal key and an MCP sign-in token (the
 * sign-in's services driven directly: code from the outbox, PKCE exchange); prints one JSON ready line
 * (`McpReady`). Exits cleanly on SIGTERM, SIGINT or when its stdin closes.
 *
 *   node dist/bench/mcp-launcher.js --data-dir DIR
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { parseArgs } from "node:util"
import { PageService } from "../server/knowledge/pages/service.js"
import { McpApproval } from "../server/mcp/sign-in/approval.js"
import { McpSessions } from "../server/identity/mcp-sign-in/sessions.js"
import { Outbox } from "../server/provisioning/outbox/service.js"
import { AccountsService } from "../server/identity/service.js"
import { startServer } from "../server/server.js"
import type { McpReady } from "./protocol.js"
import { stopOnSignals } from "./launcher-lifecycle.js"

const { values } = parseArgs({ options: { "data-dir": { type: "string" } } })
if (!values["data-dir"]) throw new Error("--data-dir is required")

const server = await startServer({ dataDir: values["data-dir"], host: "127.0.0.1", port: 0, requestsPerMinute: 1_000_000_000, demo: true })
if (!server.bootstrapKey || !server.demo) throw new Error(`${values["data-dir"]} is not a fresh data directory`)
const demo = server.demo

const { runAdmin } = await import("../server/admin.js")
const { personalKey, pageId, signInToken } = await runAdmin(
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
    const approval = yield* McpApproval
    const redirectUri = "http://127.0.0.1:9/callback"
    const { client } = yield* approval.registerClient("bench", [redirectUri], {})
    yield* approval.requestCode("bench@svc.local", { kind: "any" }, "bench")
    const mail = (yield* (yield* Outbox).list({ to: "bench@svc.local" }))[0]
    const verified = yield* approval.verifyCode("bench@svc.local", /\b(\d{6})\b/.exec(mail?.body ?? "")?.[1] ?? "", { kind: "any" })
    if (!verified) throw new Error("the sign-in code was not accepted")
    const verifier = "bench-verifier-".padEnd(64, "v")
    const codeChallenge = createHash("sha256").update(verifier).digest("base64url")
    const request = { clientId: client.id, redirectUri, codeChallenge, resource: "/mcp", scope: null }
    const code = yield* approval.approve(verified.ticket, verified.workspaces[0]!.memberId, { kind: "any" }, request)
    if (!code) throw new Error("the sign-in was not approved")
    const tokens = yield* (yield* McpSessions).exchangeCode({ clientId: client.id, code, redirectUri, codeVerifier: verifier, resource: null })
    return { personalKey: created.secret, pageId: page.id, signInToken: tokens.access_token }
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
  signInToken,
  knowledgebaseId: demo.knowledgebaseId,
  pageId
}
process.stdout.write(`${JSON.stringify(ready)}\n`)
