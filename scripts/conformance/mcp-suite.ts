/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against a running
 * `svc serve`: every server scenario runs (`--suite all`), through the key forwarder
 * (`key-proxy.ts`: the suite sends no credentials). The scenarios that apply to a product server
 * must pass; the others exercise the suite's own test tools, resources and prompts (`test_simple_text`,
 * `test://static-text`, `test_prompt_with_arguments`, …) that only the suite's reference server has,
 * and are reported, each with its reason, without failing the run (docs/decisions.md).
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { type CheckResult, failed, notApplicable, passed } from "./check.js"
import { node22, toolFile, toolsDir } from "./tools.js"

/** Scenarios that apply to svc: each must pass. */
export const requiredScenarios = [
  "server-initialize",
  "ping",
  "tools-list",
  "resources-list",
  "server-sse-polling",
  "server-sse-multiple-streams",
  "dns-rebinding-protection"
] as const

const suiteTools = "it calls the suite's own test tool"
/** Scenarios that do not apply to a product server, and why. */
export const inapplicableScenarios: Readonly<Record<string, string>> = {
  "completion-complete":
    "it asks for completions of the suite's own prompt test_prompt_with_arguments; svc has no prompts, and 2025-11-25 answers an invalid prompt name with -32602, as svc does (its completions of resource template variables are tested in test/mcp/)",
  "logging-set-level": "svc declares no `logging` capability (it sends no log messages); -32601 is the answer the spec gives",
  "tools-call-simple-text": `${suiteTools} test_simple_text`,
  "tools-call-image": `${suiteTools} test_image_content`,
  "tools-call-audio": `${suiteTools} test_audio_content`,
  "tools-call-embedded-resource": `${suiteTools} test_embedded_resource`,
  "tools-call-mixed-content": `${suiteTools} test_multiple_content_types`,
  "tools-call-with-logging": `${suiteTools} test_tool_with_logging`,
  "tools-call-error": `${suiteTools} test_error_handling; svc answers a tool it does not have with the JSON-RPC error -32602, as 2025-11-25 says`,
  "tools-call-with-progress": `${suiteTools} test_tool_with_progress`,
  "tools-call-sampling": `${suiteTools} test_sampling (svc asks clients for no sampling)`,
  "tools-call-elicitation": `${suiteTools} test_elicitation (svc asks clients for no elicitation)`,
  "json-schema-2020-12": `${suiteTools} json_schema_2020_12_tool`,
  "elicitation-sep1034-defaults": `${suiteTools} test_elicitation_sep1034_defaults`,
  "elicitation-sep1330-enums": `${suiteTools} test_elicitation_sep1330_enums`,
  "resources-read-text": "it reads the suite's own resource test://static-text",
  "resources-read-binary": "it reads the suite's own resource test://static-binary",
  "resources-templates-read": "it reads the suite's own template test://template/{id}/data",
  "resources-subscribe": "svc declares no resource `subscribe` capability; the resource is the suite's own",
  "resources-unsubscribe": "svc declares no resource `subscribe` capability; the resource is the suite's own",
  "prompts-list": "svc offers no prompts (no `prompts` capability)",
  "prompts-get-simple": "svc offers no prompts (no `prompts` capability)",
  "prompts-get-with-args": "svc offers no prompts (no `prompts` capability)",
  "prompts-get-embedded-resource": "svc offers no prompts (no `prompts` capability)",
  "prompts-get-with-image": "svc offers no prompts (no `prompts` capability)"
}

interface Check {
  readonly id: string
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED"
  readonly errorMessage?: string
}

/** The suite's CLI: on Node 22 when there is one, else on this Node with `fs.globSync` stubbed (tools/conformance/node20/). */
const suiteCommand = (): [string, Array<string>] => {
  const cli = toolFile("@modelcontextprotocol/conformance", "dist/index.js")
  const node = node22()
  return node !== undefined ? [node, [cli]] : [process.execPath, ["--import", join(toolsDir, "node20", "register.mjs"), cli]]
}

/** Reads `<dir>/server-<scenario>-<time>/checks.json` for every scenario that ran. */
const readResults = (dir: string): Map<string, ReadonlyArray<Check>> => {
  const results = new Map<string, ReadonlyArray<Check>>()
  for (const entry of readdirSync(dir)) {
    const match = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry)
    if (!match) continue
    const file = join(dir, entry, "checks.json")
    results.set(match[1]!, existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Array<Check>) : [])
  }
  return results
}

/** One line: how many checks succeeded, and the failures' messages. */
const summary = (checks: ReadonlyArray<Check>): string => {
  const failures = checks.filter((check) => check.status === "FAILURE")
  const successes = checks.filter((check) => check.status === "SUCCESS").length
  const warnings = checks.filter((check) => check.status === "WARNING").length
  const head = `${successes} checks succeeded, ${failures.length} failed${warnings ? `, ${warnings} warnings` : ""}`
  return failures.length === 0 ? head : `${head}: ${failures.map((check) => `${check.id}: ${check.errorMessage ?? "failed"}`).join("; ")}`
}

/**
 * Runs every server scenario of the suite against `mcpUrl` (the forwarder's) and judges them. The
 * suite runs as a child process while this one's event loop keeps serving the forwarder.
 */
export const runMcpSuite = async (mcpUrl: string): Promise<Array<CheckResult>> => {
  const out = mkdtempSync(join(tmpdir(), "svc-mcp-conformance-"))
  try {
    const [command, args] = suiteCommand()
    try {
      await promisify(execFile)(command, [...args, "server", "--url", mcpUrl, "--suite", "all", "-o", out], { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 })
    } catch {
      // The CLI exits 1 whenever any scenario fails, the inapplicable ones included: judged below.
    }
    const results = readResults(out)
    const checks: Array<CheckResult> = []
    for (const scenario of requiredScenarios) {
      const name = `MCP conformance: ${scenario}`
      const found = results.get(scenario)
      if (found === undefined) checks.push(failed(name, "the suite ran no such scenario"))
      else if (found.length === 0) checks.push(failed(name, "the scenario recorded no checks (it did not finish)"))
      else if (found.some((check) => check.status === "FAILURE")) checks.push(failed(name, summary(found)))
      else checks.push(passed(name, summary(found)))
    }
    for (const [scenario, found] of results) {
      if ((requiredScenarios as ReadonlyArray<string>).includes(scenario)) continue
      const reason = inapplicableScenarios[scenario]
      const name = `MCP conformance: ${scenario}`
      if (reason === undefined) checks.push(failed(name, `a scenario this run does not know (judge it, then list it): ${summary(found)}`))
      else checks.push(notApplicable(name, reason))
    }
    return checks
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}
