/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`) against svc: over Streamable
 * HTTP with a bearer header to a running `svc serve`, and over stdio to `svc mcp` (the key in
 * `SVC_API_KEY`, the data directory in `SVC_DATA_DIR`). Each transport lists the tools (with
 * `--strict`: no error-severity schema portability problem), calls `whoami` and `search_docs`,
 * calls `get_execution` for a run that does not exist (an `isError` result naming `not_found`:
 * what the conformance suite's `tools-call-error` asks of its own test tool), and lists the
 * resources. The Inspector runs on Node 22.19 or later (tools.ts).
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type CheckResult, failed, passed } from "./check.js"
import { svcBin } from "./svc-process.js"
import { node22, toolFile } from "./tools.js"

/** How the Inspector reaches svc: its target arguments. */
interface Transport {
  readonly name: string
  readonly target: ReadonlyArray<string>
}

interface Answer {
  readonly status: number | null
  readonly json: any
  readonly stderr: string
}

/** The Inspector CLI's exit status for a tool result with `isError: true`. */
const toolIsErrorExit = 5

/** An execution id no run has. */
const absentId = "00000000-0000-4000-8000-000000000000"

/** The email of the member whose key the checks use (svc-process.ts). */
const memberEmail = "conformance@svc.local"

/** The Inspector CLI's checks of svc over HTTP (`mcpUrl`, bearer `key`) and stdio (`svc mcp` on `dataDir`). */
export const runInspector = (options: { mcpUrl: string; key: string; dataDir: string }): Array<CheckResult> => {
  const node = node22()
  if (node === undefined) {
    return [failed("MCP Inspector", `needs Node 22.19 or later (this is ${process.version}; tools/conformance brings one on linux-x64 only)`)]
  }
  const catalog = mkdtempSync(join(tmpdir(), "svc-inspector-"))
  const transports: ReadonlyArray<Transport> = [
    { name: "HTTP", target: [options.mcpUrl, "--transport", "http", "--header", `Authorization: Bearer ${options.key}`] },
    {
      name: "stdio",
      target: ["-e", `SVC_API_KEY=${options.key}`, "-e", `SVC_DATA_DIR=${options.dataDir}`, "--transport", "stdio", process.execPath, svcBin, "mcp"]
    }
  ]
  const inspect = (transport: Transport, args: ReadonlyArray<string>): Answer => {
    const run = spawnSync(node, [toolFile("@modelcontextprotocol/inspector", "clients/launcher/build/index.js"), "--cli", ...transport.target, ...args], {
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, MCP_CATALOG_PATH: join(catalog, "mcp.json") }
    })
    let json: any = undefined
    try {
      json = JSON.parse(run.stdout)
    } catch {
      json = undefined
    }
    return { status: run.status, json, stderr: run.stderr.trim().split("\n").slice(-3).join(" ") }
  }
  const checks: Array<CheckResult> = []
  try {
    for (const transport of transports) {
      const check = (what: string, args: ReadonlyArray<string>, judge: (json: any) => string | undefined, exitStatus = 0) => {
        const name = `MCP Inspector (${transport.name}): ${what}`
        const answer = inspect(transport, args)
        if (answer.status !== exitStatus) return checks.push(failed(name, `exit ${answer.status}: ${answer.stderr}`))
        const problem = answer.json === undefined ? "no JSON answer" : judge(answer.json)
        checks.push(problem === undefined ? passed(name, "ok") : failed(name, problem))
      }
      check("tools/list --strict", ["--method", "tools/list", "--strict"], (json) => {
        const tools: Array<{ name: string; title?: string; annotations?: unknown; outputSchema?: unknown }> = json.tools ?? []
        const names = tools.map((tool) => tool.name)
        if (!names.includes("whoami") || !names.includes("search_docs")) return `whoami and search_docs not listed (${names.join(", ")})`
        const bare = tools.filter((tool) => tool.title === undefined || tool.annotations === undefined || tool.outputSchema === undefined)
        return bare.length === 0 ? undefined : `tools without title, annotations or outputSchema: ${bare.map((tool) => tool.name).join(", ")}`
      })
      check("tools/call whoami", ["--method", "tools/call", "--tool-name", "whoami"], (json) =>
        json.isError !== true && json.structuredContent?.member?.email === memberEmail ? undefined : `unexpected answer: ${JSON.stringify(json).slice(0, 300)}`
      )
      check("tools/call search_docs", ["--method", "tools/call", "--tool-name", "search_docs", "--tool-arg", "query=personal keys"], (json) =>
        json.isError !== true && Array.isArray(json.content) && json.content.length > 0 ? undefined : `unexpected answer: ${JSON.stringify(json).slice(0, 300)}`
      )
      // The assertion of the suite's tools-call-error, on a tool of svc's own that runs and fails:
      // the Inspector prints the result and exits 5 for a result with `isError: true`.
      check(
        "tools/call of a tool that fails",
        ["--method", "tools/call", "--tool-name", "get_execution", "--tool-arg", `executionId=${absentId}`],
        (json) =>
          json.isError === true && typeof json.content?.[0]?.text === "string" && json.content[0].text.includes("not_found")
            ? undefined
            : `expected an isError result naming not_found: ${JSON.stringify(json).slice(0, 300)}`,
        toolIsErrorExit
      )
      check("resources/list", ["--method", "resources/list"], (json) => (Array.isArray(json.resources) ? undefined : `no resources array: ${JSON.stringify(json).slice(0, 300)}`))
    }
    return checks
  } finally {
    rmSync(catalog, { recursive: true, force: true })
  }
}
