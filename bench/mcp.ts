/**
 * `npm run bench:mcp`: MCP tool calls against the same REST requests, measured from a second process.
 *
 * - tool calls per second and server CPU per call over Streamable HTTP, one MCP session per
 *   connection (20 by default), for `search_knowledgebase` and `read_page`, beside the REST requests
 *   doing the same work with the same personal key (`POST /knowledgebases/{id}/search`,
 *   `GET /knowledgebases/{id}/pages/{pageId}`); the target is at most 1.5x the REST CPU per call;
 * - `read_page` again with the member's MCP sign-in token instead of the key (the token lookup per request);
 * - `tools/list` latency for an admin member offered every family, one request at a time.
 *
 *   node dist/bench/mcp.js [--duration 10] [--connections 20] [--keep-data] [--profile DIR] [--only TEXT]
 *
 * `--profile DIR` writes the server's V8 CPU profile there (summarize it with profile-summary.js);
 * `--only TEXT` runs only the scenarios whose label contains TEXT (e.g. `read_page`), and skips `tools/list`.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { type Child, cleanupOnExit, planCpus, spawnChild } from "./children.js"
import { loadCells, loadColumns, type LoadResult, measureLoad } from "./load.js"
import { openSession, protocolVersion, toolCall } from "./mcp-session.js"
import type { McpReady } from "./protocol.js"
import { fmt, table } from "./report.js"

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "20" },
    "keep-data": { type: "boolean", default: false },
    profile: { type: "string" },
    only: { type: "string" }
  }
})

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0

const main = async () => {
  const plan = await planCpus()
  console.error(plan.describe("bench:mcp", { server: "svc", runner: "load generator" }))
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-mcp-"))
  const children: Array<Child<McpReady>> = []
  const cleanup = cleanupOnExit(children, () => dataDir, flags["keep-data"], "the MCP benchmark")
  try {
    const svc = await spawnChild<McpReady>({
      name: "svc",
      script: join(dirname(fileURLToPath(import.meta.url)), "mcp-launcher.js"),
      args: ["--data-dir", dataDir],
      cpu: plan.serverCpu,
      nodeFlags: flags.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", flags.profile],
      logFile: join(dataDir, "svc.stderr.log")
    })
    children.push(svc)
    const { baseUrl, mcpUrl, personalKey, signInToken, knowledgebaseId, pageId, pid } = svc.ready
    const connections = Number(flags.connections)
    const durationS = Number(flags.duration)
    const auth = { authorization: `Bearer ${personalKey}` }
    const knowledgeUrl = `${mcpUrl}?tools=knowledge`
    const sessions = await Promise.all(Array.from({ length: connections }, () => openSession(knowledgeUrl, personalKey)))
    const signInSessions = await Promise.all(Array.from({ length: connections }, () => openSession(knowledgeUrl, signInToken)))
    const query = "How long do I have to return a chair?"

    const mcp = async (body: string, seconds: number, token = personalKey): Promise<LoadResult> => {
      let next = 0
      const auth = { authorization: `Bearer ${token}` }
      const opened = token === personalKey ? sessions : signInSessions
      return measureLoad(
        {
          url: knowledgeUrl,
          method: "POST",
          headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": protocolVersion },
          body,
          connections,
          duration: seconds,
          timeout: 10,
          setupClient: (client: { setHeaders: (headers: Record<string, string>) => void }) => {
            client.setHeaders({
              ...auth,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": protocolVersion,
              "mcp-session-id": opened[next++ % opened.length]!
            })
          }
        } as never,
        connections,
        pid
      )
    }
    const rest = (url: string, method: "GET" | "POST", body: string | undefined, seconds: number) =>
      measureLoad(
        { url, method, headers: { ...auth, "content-type": "application/json" }, ...(body === undefined ? {} : { body }), connections, duration: seconds, timeout: 10 },
        connections,
        pid
      )

    const scenarios: ReadonlyArray<[string, (seconds: number) => Promise<LoadResult>]> = [
      ["REST  POST /knowledgebases/{id}/search", (s) => rest(`${baseUrl}/knowledgebases/${knowledgebaseId}/search`, "POST", JSON.stringify({ query }), s)],
      ["MCP   search_knowledgebase", (s) => mcp(toolCall("search_knowledgebase", { knowledgebaseId, query }), s)],
      ["REST  GET /knowledgebases/{id}/pages/{pageId}", (s) => rest(`${baseUrl}/knowledgebases/${knowledgebaseId}/pages/${pageId}`, "GET", undefined, s)],
      ["MCP   read_page (summary view)", (s) => mcp(toolCall("read_page", { knowledgebaseId, pageId }), s)],
      ["MCP   read_page, sign-in token", (s) => mcp(toolCall("read_page", { knowledgebaseId, pageId }), s, signInToken)]
    ]
    const results: Array<[string, LoadResult]> = []
    for (const [label, run] of scenarios) {
      if (flags.only !== undefined && !label.includes(flags.only)) continue
      await run(2)
      console.error(`${label} ...`)
      results.push([label, await run(durationS)])
    }

    // tools/list with every family, one request at a time, on one session of an admin.
    const listTimes: Array<number> = []
    let toolCount = 0
    if (flags.only === undefined) {
      const everything = await openSession(mcpUrl, personalKey)
      for (let i = 0; i < 300; i++) {
        const started = performance.now()
        const response = await fetch(mcpUrl, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": everything, "mcp-protocol-version": protocolVersion },
          body: JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "tools/list", params: {} })
        })
        const body = (await response.json()) as { result: { tools: Array<unknown> } }
        listTimes.push(performance.now() - started)
        toolCount = body.result.tools.length
      }
      listTimes.splice(0, 20)
      listTimes.sort((a, b) => a - b)
    }

    console.log(plan.describe("bench:mcp", { server: "svc", runner: "load generator" }))
    console.log()
    console.log(table(["scenario", "conns", "requests", ...loadColumns], results.map(([label, r]) => [label, String(r.connections), String(r.requests), ...loadCells(r)])))
    console.log()
    const cpu = (label: string) => results.find(([measured]) => measured === scenarios.find(([name]) => name.includes(label))?.[0])?.[1].serverCpuUsPerRequest ?? null
    const ratio = (mcpLabel: string, restLabel: string) => {
      const [m, r] = [cpu(mcpLabel), cpu(restLabel)]
      return m === null || r === null ? "-" : fmt(m / r, 2)
    }
    console.log(`CPU per call, MCP / REST: search_knowledgebase ${ratio("search_knowledgebase", "/search")}x, read_page ${ratio("read_page (summary", "/pages/")}x (target <= 1.5x)`)
    const [keyCpu, tokenCpu] = [cpu("read_page (summary"), cpu("sign-in token")]
    console.log(`CPU per read_page, sign-in token / personal key: ${keyCpu === null || tokenCpu === null ? "-" : fmt(tokenCpu / keyCpu, 2)}x`)
    if (listTimes.length > 0) {
      console.log(
        `tools/list with every family (${toolCount} tools, sequential, ${listTimes.length}): p50 ${fmt(percentile(listTimes, 50), 2)} ms, ` +
          `p99 ${fmt(percentile(listTimes, 99), 2)} ms, max ${fmt(listTimes.at(-1) ?? null, 2)} ms`
      )
    }
  } finally {
    await cleanup()
  }
}

await main()
