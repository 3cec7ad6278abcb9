/**
 * Redocly CLI (`lint`, recommended ruleset) and Spectral (`lint`, `spectral:oas`) on the OpenAPI
 * document a running `svc serve` serves: any error or warning fails the check. Their configurations
 * (`tools/conformance/redocly.yaml`, `spectral.yaml`) turn off only rules with a written reason.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type CheckResult, failed, passed } from "./check.js"
import { toolFile, toolsDir } from "./tools.js"

/** A finding of a linter, as one line. */
interface Finding {
  readonly severity: "error" | "warning"
  readonly text: string
}

const report = (name: string, findings: ReadonlyArray<Finding>): CheckResult => {
  if (findings.length === 0) return passed(name, "0 errors, 0 warnings")
  const errors = findings.filter((finding) => finding.severity === "error").length
  const lines = findings.slice(0, 20).map((finding) => finding.text)
  const more = findings.length > 20 ? `; and ${findings.length - 20} more` : ""
  return failed(name, `${errors} errors, ${findings.length - errors} warnings: ${lines.join("; ")}${more}`)
}

/** Runs a linter's CLI and parses its JSON output (answers undefined and the stderr if it printed none). */
const lint = (args: ReadonlyArray<string>): { json: any; stderr: string } => {
  const run = spawnSync(process.execPath, args, {
    cwd: toolsDir,
    encoding: "utf8",
    timeout: 180_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", SCARF_ANALYTICS: "false", DO_NOT_TRACK: "1" }
  })
  try {
    return { json: JSON.parse(run.stdout), stderr: run.stderr }
  } catch {
    return { json: undefined, stderr: `${run.stderr}${run.stdout}`.trim().slice(0, 500) }
  }
}

/** Redocly's findings on the document at `file`. */
const redocly = (file: string): CheckResult => {
  const name = "Redocly CLI lint (recommended)"
  const { json, stderr } = lint([toolFile("@redocly/cli", "bin/cli.js"), "lint", file, "--config", join(toolsDir, "redocly.yaml"), "--format", "json"])
  if (json === undefined) return failed(name, `no report: ${stderr}`)
  const problems: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }> = json.problems ?? []
  return report(
    name,
    problems.map((problem) => ({
      severity: problem.severity === "error" ? "error" : "warning",
      text: `${problem.severity} ${problem.ruleId} at ${problem.location?.[0]?.pointer ?? "?"}: ${problem.message}`
    }))
  )
}

/** Spectral's findings (errors and warnings; information and hints are not counted). */
const spectral = (file: string): CheckResult => {
  const name = "Spectral lint (spectral:oas)"
  const { json, stderr } = lint([
    toolFile("@stoplight/spectral-cli", "dist/index.js"),
    "lint",
    file,
    "--ruleset",
    join(toolsDir, "spectral.yaml"),
    "--format",
    "json",
    "--fail-severity",
    "error",
    "--quiet"
  ])
  if (!Array.isArray(json)) return failed(name, `no report: ${stderr}`)
  const findings = (json as Array<{ code: string; severity: number; message: string; path: Array<string | number> }>)
    .filter((result) => result.severity <= 1)
    .map((result): Finding => ({
      severity: result.severity === 0 ? "error" : "warning",
      text: `${result.severity === 0 ? "error" : "warning"} ${result.code} at /${result.path.join("/")}: ${result.message}`
    }))
  return report(name, findings)
}

/** Fetches the served document from `openApiUrl` and lints it with both tools. */
export const lintOpenApi = async (openApiUrl: string): Promise<{ checks: Array<CheckResult>; document: unknown }> => {
  const response = await fetch(openApiUrl)
  const text = await response.text()
  if (response.status !== 200) return { checks: [failed("OpenAPI document", `GET ${openApiUrl} answered ${response.status}`)], document: undefined }
  const dir = mkdtempSync(join(tmpdir(), "svc-openapi-lint-"))
  try {
    const file = join(dir, "openapi.json")
    writeFileSync(file, text)
    return { checks: [redocly(file), spectral(file)], document: JSON.parse(text) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
