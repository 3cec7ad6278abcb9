/**
 * `npm run conformance`: svc checked by tools nobody here wrote (issue 23), against a real
 * `svc serve --ephemeral` of this checkout's build:
 * - the official MCP conformance suite, every server scenario (mcp-suite.ts);
 * - the MCP Inspector's CLI over HTTP and over stdio (inspector.ts);
 * - Redocly CLI and Spectral on the served OpenAPI document (openapi-lint.ts);
 * - Ajv 2020 loading that document, and the sweep of every answer recorded from a real run of the
 *   test suite (response-sweep.ts): the recording named by `SVC_RECORDED_RESPONSES` (`.ci/run`
 *   records its `npm test`), else one this command makes by running the HTTP test files
 *   (`test/**\/*.http.test.ts`) on SQLite with `SVC_RECORD_RESPONSES` set.
 * Prints one line per check and exits 1 if any failed. The checkers are installed from
 * `tools/conformance/` (their own lockfile) on first use.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { type CheckResult, failed, passed } from "./check.js"
import { runInspector } from "./inspector.js"
import { startKeyProxy } from "./key-proxy.js"
import { runMcpSuite } from "./mcp-suite.js"
import { lintOpenApi } from "./openapi-lint.js"
import { compileResponseSchemas, readRecordings, sweepRecords } from "./response-sweep.js"
import { repoRoot, startSvc } from "./svc-process.js"
import { ensureTools } from "./tools.js"

/** The HTTP test files, whose recorded answers the sweep checks when no recording is given. */
const httpTestFiles = (): Array<string> => {
  const found: Array<string> = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".http.test.ts")) found.push(relative(repoRoot, path))
    }
  }
  walk(join(repoRoot, "test"))
  return found.sort()
}

/** Runs the HTTP test files on SQLite with the recorder on; answers the recording's directory, or a failed check. */
const recordTestRun = (): { dir: string } | CheckResult => {
  const dir = mkdtempSync(join(tmpdir(), "svc-recorded-responses-"))
  const started = Date.now()
  const run = spawnSync("npx", ["vitest", "run", "--project", "sqlite", ...httpTestFiles()], {
    cwd: repoRoot,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, SVC_RECORD_RESPONSES: dir }
  })
  if (run.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    return failed("Recorded test run", `vitest exited ${run.status}: the HTTP test files must pass to be recorded`)
  }
  console.log(`recorded the HTTP test files in ${Math.round((Date.now() - started) / 1000)} s`)
  return { dir }
}

/** Ajv loads the document and every answer of the recording validates against it. */
const sweep = (document: unknown): Array<CheckResult> => {
  const checks: Array<CheckResult> = []
  let compiled: number
  try {
    compiled = compileResponseSchemas(document as Record<string, any>)
    checks.push(passed("Ajv 2020 loads the served document", `${compiled} response schemas compiled`))
  } catch (error) {
    return [failed("Ajv 2020 loads the served document", String(error))]
  }
  const given = process.env.SVC_RECORDED_RESPONSES
  if (given && !existsSync(given)) return [...checks, failed("Sweep", `SVC_RECORDED_RESPONSES names ${given}, which does not exist: nothing was recorded`)]
  const recording = given ? { dir: given } : recordTestRun()
  if ("ok" in recording) return [...checks, recording]
  try {
    const report = sweepRecords(document as Record<string, any>, readRecordings(recording.dir))
    const counts = `${report.records} answers recorded, ${report.validated} validated, ${report.noOperation} to no operation of the document, ${report.bodyOmitted} bodies too large to record; ${report.operationsSeen} of ${report.operations} operations reached`
    const name = "Sweep: recorded answers of the test suite against the document"
    if (report.records === 0) checks.push(failed(name, "nothing was recorded"))
    else if (report.problems.length === 0) checks.push(passed(name, counts))
    else {
      const lines = report.problems.map((problem) => `${problem.operation} ${problem.status} (${problem.count}x, e.g. ${problem.example}): ${problem.message}`)
      checks.push(failed(name, `${counts}; ${report.problems.length} kinds of mismatch:\n    ${lines.join("\n    ")}`))
    }
    return checks
  } finally {
    if (!given) rmSync(recording.dir, { recursive: true, force: true })
  }
}

const main = async (): Promise<number> => {
  ensureTools()
  const svc = await startSvc()
  const proxy = await startKeyProxy(svc.origin, svc.personalKey)
  const checks: Array<CheckResult> = []
  try {
    checks.push(...(await runMcpSuite(`${proxy.origin}/mcp`)))
    checks.push(...runInspector({ mcpUrl: svc.mcpUrl, key: svc.personalKey, dataDir: svc.dataDir }))
    const lint = await lintOpenApi(svc.openApiUrl)
    checks.push(...lint.checks)
    if (lint.document !== undefined) checks.push(...sweep(lint.document))
  } finally {
    await proxy.close()
    await svc.stop()
  }
  const mark = (check: CheckResult) => (check.notApplicable ? "-" : check.ok ? "✓" : "✗")
  const order = (check: CheckResult) => (check.notApplicable ? 1 : 0)
  for (const check of [...checks].sort((a, b) => order(a) - order(b))) console.log(`${mark(check)} ${check.name}: ${check.detail}`)
  const failures = checks.filter((check) => !check.ok).length
  const inapplicable = checks.filter((check) => check.notApplicable).length
  console.log(`Conformance: ${checks.length - failures - inapplicable} checks passed, ${failures} checks failed (${inapplicable} do not apply to svc).`)
  return failures === 0 ? 0 : 1
}

process.exitCode = await main()
