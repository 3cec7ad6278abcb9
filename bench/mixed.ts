/**
 * The mixed scenario of `npm run bench` (bench/run.ts, `--only mixed` for it alone): one svc server
 * (bench/mixed-launcher.ts: the demo content, an Agent on the fake model of bench/fake-model.ts,
 * which runs in this process), one load from this process at a fixed number of connections, each
 * connection sending the operations of bench/mixed-ops.ts in their weighted order:
 *
 * | operation     | weight | request                                                   |
 * |---------------|-------:|-----------------------------------------------------------|
 * | read          |    35% | `GET /knowledgebases?limit=20` (cacheable listing)        |
 * | search        |    15% | `POST /knowledgebases/{demo}/search`, `kinds: ["pages"]`  |
 * | keyed-create  |    10% | `POST /knowledgebases` with a new `Idempotency-Key`       |
 * | patch         |    10% | `PATCH …/pages/{pageId}`, one `append`, 100 pages in turn |
 * | turn          |    10% | `POST /agents/{id}/conversation`, fake model              |
 * | mcp           |    15% | MCP `tools/call` `read_page`, one session per connection  |
 * | provision     |     5% | `POST /end-users`, a new email, a tier plan and a group   |
 *
 * Reported: requests per second, p50/p99 per operation and the server's CPU per request of the mix
 * as a whole; then each operation alone on the same server for a few seconds, its CPU per request,
 * and the mix's CPU per request as those solo figures would predict it (their weighted sum): the
 * difference is what the operations cost each other (a write empties the read caches, for one).
 * Every answer must be its operation's success status (an MCP answer a JSON-RPC result that is not
 * a tool error); bench/run.ts exits with 1 otherwise.
 *
 *   node dist/bench/run.js --only mixed [--mixed-connections 20] [--mixed-duration 10] [--mixed-solo 3] [--cpu-prof]
 *
 * With `--only mixed --cpu-prof` the mixed server writes its V8 CPU profile (summarized into
 * bench/results/mixed-profile-summary.txt); `--mixed-solo 0` then keeps the solo runs out of it.
 */
import { mkdirSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import { type Child, machineBusyCpuMs, procCpuMs, setSvcCaches, spawnChild } from "./children.js"
import { startFakeModel } from "./fake-model.js"
import { type Latency, Samples } from "./load.js"
import { openSession } from "./mcp-session.js"
import { answerProblem, createsPerKey, mix, type MixedTarget, type OperationName, requestBuilder, scheduleOf } from "./mixed-ops.js"
import type { MixedReady, Ready } from "./protocol.js"
import { fmt, sleep, table } from "./report.js"

const here = dirname(fileURLToPath(import.meta.url))

/** How the mixed scenario runs. */
export interface MixedOptions {
  /** A fresh directory for the server's data. */
  readonly dataDir: string
  readonly resultsDir: string
  /** The CPU to pin the server to. */
  readonly cpu: number | undefined
  readonly connections: number
  readonly warmupS: number
  readonly durationS: number
  /** Seconds of each operation alone (after one second of warm-up); 0 runs none. */
  readonly soloS: number
  /** Writes the server's V8 CPU profile into this (fresh) directory. */
  readonly profileDir?: string | undefined
}

/** One operation's figures within a run. */
export interface OperationFigures {
  readonly requests: number
  /** Its share of the run's requests. */
  readonly share: number
  readonly requestsPerSecond: number
  readonly latencyMs: Latency
  readonly statusCounts: Readonly<Record<string, number>>
  /** Answers that were not its success (see `answerProblem`), and connection errors. */
  readonly failed: number
  readonly errors: number
  /** The first few failures, for the report. */
  readonly failures: ReadonlyArray<string>
}

/** What one run (the mix, or one operation alone) measured. */
export interface MixedRun {
  readonly label: string
  readonly connections: number
  readonly seconds: number
  readonly requests: number
  readonly requestsPerSecond: number
  readonly latencyMs: Latency
  readonly failed: number
  readonly errors: number
  readonly serverCpuUsPerRequest: number | null
  /** Cores kept busy by the server, by this process (load and fake model) and by everything else. */
  readonly serverCpuUtilization: number | null
  readonly loadgenCpuUtilization: number
  readonly otherCpuUtilization: number | null
  readonly operations: Readonly<Partial<Record<OperationName, OperationFigures>>>
}

/** The mixed scenario's results. */
export interface MixedReport {
  readonly mix: typeof mix
  readonly warmup: MixedRun
  readonly measured: MixedRun
  /** Each operation alone, in the order of the mix. */
  readonly solo: ReadonlyArray<MixedRun & { readonly operation: OperationName }>
  /** Each operation alone again with every `data_version` cache missing (bench/cache-misses.ts). */
  readonly soloCachesMissing: ReadonlyArray<MixedRun & { readonly operation: OperationName }>
  /** The mix's CPU per request as the solo runs predict it: Σ share × solo CPU per request. */
  readonly predictedCpuUsPerRequest: number | null
  /** The same from the runs with every cache missing: what the mix would cost if no cache ever held. */
  readonly predictedCachesMissingCpuUsPerRequest: number | null
  /** Whether every answer of every run (warm-ups included) was its operation's success. */
  readonly allSucceeded: boolean
}

const round = (value: number, digits = 1): number => Number(value.toFixed(digits))

/** Sends `next()`'s operations from `connections` connections for `seconds`, measuring as bench/load.ts does. */
export const drive = async (
  label: string,
  pool: Pool,
  build: ReturnType<typeof requestBuilder>,
  next: () => OperationName,
  connections: number,
  seconds: number,
  serverPid: number
): Promise<MixedRun> => {
  const all = new Samples()
  const perOperation = new Map<OperationName, { samples: Samples; statusCounts: Record<string, number>; failed: number; errors: number; failures: Array<string> }>()
  const figuresOf = (op: OperationName) => {
    let figures = perOperation.get(op)
    if (figures === undefined) {
      figures = { samples: new Samples(), statusCounts: {}, failed: 0, errors: 0, failures: [] }
      perOperation.set(op, figures)
    }
    return figures
  }
  const serverCpuBefore = procCpuMs(serverPid)
  const machineCpuBefore = machineBusyCpuMs()
  const loadgenCpuBefore = process.cpuUsage()
  const startedAt = performance.now()
  const until = startedAt + seconds * 1_000
  let lastResponseAt = startedAt
  await Promise.all(
    Array.from({ length: connections }, async (_, connection) => {
      while (performance.now() < until) {
        const op = next()
        const request = build(op, connection)
        const figures = figuresOf(op)
        const sent = performance.now()
        try {
          const response = await pool.request({ method: request.method, path: request.path, headers: request.headers, body: request.body ?? null })
          const body = await response.body.text()
          lastResponseAt = performance.now()
          const elapsed = lastResponseAt - sent
          all.push(elapsed)
          figures.samples.push(elapsed)
          figures.statusCounts[response.statusCode] = (figures.statusCounts[response.statusCode] ?? 0) + 1
          const problem = answerProblem(op, request.expect, response.statusCode, String(response.headers["content-type"] ?? ""), body)
          if (problem !== null) {
            figures.failed++
            if (figures.failures.length < 3) figures.failures.push(problem)
          }
        } catch (error) {
          figures.errors++
          if (figures.failures.length < 3) figures.failures.push(`connection error: ${error instanceof Error ? error.message : String(error)}`)
        }
      }
    })
  )
  const serverCpuAfter = procCpuMs(serverPid)
  const machineCpuAfter = machineBusyCpuMs()
  const loadgenCpu = process.cpuUsage(loadgenCpuBefore)
  const wallMs = performance.now() - startedAt
  const runSeconds = (lastResponseAt - startedAt) / 1_000
  const serverCpuMs = serverCpuBefore !== null && serverCpuAfter !== null ? serverCpuAfter - serverCpuBefore : null
  const loadgenCpuMs = (loadgenCpu.user + loadgenCpu.system) / 1_000
  const otherCpuMs =
    machineCpuBefore !== null && machineCpuAfter !== null && serverCpuMs !== null
      ? Math.max(0, machineCpuAfter - machineCpuBefore - serverCpuMs - loadgenCpuMs)
      : null
  const requests = all.length
  const operations: Partial<Record<OperationName, OperationFigures>> = {}
  let failed = 0
  let errors = 0
  for (const { name } of mix) {
    const figures = perOperation.get(name)
    if (figures === undefined) continue
    failed += figures.failed
    errors += figures.errors
    operations[name] = {
      requests: figures.samples.length,
      share: round(figures.samples.length / Math.max(1, requests), 3),
      requestsPerSecond: round(figures.samples.length / runSeconds),
      latencyMs: figures.samples.latency(),
      statusCounts: figures.statusCounts,
      failed: figures.failed,
      errors: figures.errors,
      failures: figures.failures
    }
  }
  return {
    label,
    connections,
    seconds: round(runSeconds, 3),
    requests,
    requestsPerSecond: round(requests / runSeconds),
    latencyMs: all.latency(),
    failed,
    errors,
    serverCpuUsPerRequest: serverCpuMs === null || requests === 0 ? null : round((serverCpuMs * 1_000) / requests),
    serverCpuUtilization: serverCpuMs === null ? null : round(serverCpuMs / (runSeconds * 1_000), 2),
    loadgenCpuUtilization: round(loadgenCpuMs / wallMs, 2),
    otherCpuUtilization: otherCpuMs === null ? null : round(otherCpuMs / wallMs, 2),
    operations
  }
}

/** Sends one request and answers its JSON, failing unless its status is `expected`. */
const call = async (url: string, init: { method: string; headers: Record<string, string>; body?: unknown }, expected: number): Promise<Record<string, any>> => {
  const response = await fetch(url, {
    method: init.method,
    headers: { ...init.headers, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  const text = await response.text()
  if (response.status !== expected) throw new Error(`mixed set-up: ${init.method} ${url} answered ${response.status}: ${text.slice(0, 300)}`)
  return text === "" ? {} : (JSON.parse(text) as Record<string, any>)
}

/** Sets the server up over HTTP: listing content, pages to patch, the Agent on the fake model, a group, MCP sessions. */
export const setUp = async (ready: MixedReady, connections: number): Promise<MixedTarget> => {
  const headers = { authorization: `Bearer ${ready.bootstrapKey}` }
  // More Knowledgebases than a page of the listing, as in the read scenario.
  for (let i = 1; i <= 24; i++) {
    await call(`${ready.baseUrl}/knowledgebases`, { method: "POST", headers, body: { name: `Listed ${String(i).padStart(2, "0")}` } }, 201)
  }
  const patched = await call(`${ready.baseUrl}/knowledgebases`, { method: "POST", headers, body: { name: "Patched pages" } }, 201)
  const patchKnowledgebaseId = String(patched.knowledgebase.id)
  const paragraph = "A paragraph of the benchmark's page, long enough to be a real page body. ".repeat(6)
  const patchPageIds: Array<string> = []
  for (let i = 1; i <= 100; i++) {
    const bodyMarkdown = `# Page ${i}\n\n${Array.from({ length: 7 }, () => paragraph).join("\n\n")}\n`
    const page = await call(`${ready.baseUrl}/knowledgebases/${patchKnowledgebaseId}/pages`, { method: "POST", headers, body: { title: `Page ${i}`, bodyMarkdown } }, 201)
    patchPageIds.push(String(page.page.id))
  }
  const agent = await call(`${ready.baseUrl}/agents`, { method: "POST", headers, body: { name: "Mixed instant", model: "instant" } }, 201)
  const agentId = String(agent.agent.id)
  await call(`${ready.baseUrl}/agents/${agentId}/publish`, { method: "POST", headers }, 200)
  const group = await call(`${ready.baseUrl}/user-groups`, { method: "POST", headers, body: { name: "Mixed group" } }, 201)
  const sessions = await Promise.all(Array.from({ length: connections }, () => openSession(`${ready.mcpUrl}?tools=knowledge`, ready.personalKey)))
  return {
    key: ready.bootstrapKey,
    personalKey: ready.personalKey,
    sessions,
    knowledgebaseId: ready.knowledgebaseId,
    pageId: ready.pageId,
    patchKnowledgebaseId,
    patchPageIds,
    agentId,
    tierPlanId: ready.tierPlanId,
    groupId: String(group.group.id),
    createKeys: ready.createKeys,
    runLabel: String(Date.now())
  }
}

/** Runs the mixed scenario on a server of its own, pushed on `children` (stopped by the caller's clean-up). */
export const runMixed = async (options: MixedOptions, children: Array<Child<Ready>>): Promise<MixedReport> => {
  mkdirSync(options.dataDir, { recursive: true })
  if (options.profileDir !== undefined) {
    rmSync(options.profileDir, { recursive: true, force: true })
    mkdirSync(options.profileDir, { recursive: true })
  }
  const model = await startFakeModel()
  try {
    // Keyed creates: at most ~3,000 requests a second in the mix, ~5,000 alone; 200 per organization.
    const creates = (options.warmupS + options.durationS) * 3_000 * 0.1 + (1 + options.soloS) * 5_000
    const svc = await spawnChild<MixedReady>({
      name: "svc (mixed)",
      script: join(here, "mixed-launcher.js"),
      args: ["--data-dir", options.dataDir, "--model-url", model.baseUrl, "--create-orgs", String(Math.ceil(creates / createsPerKey) + 1)],
      cpu: options.cpu,
      nodeFlags: options.profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", options.profileDir],
      logFile: join(options.resultsDir, "mixed-svc.stderr.log"),
      readyTimeoutMs: 120_000
    })
    children.push(svc)
    console.log(`svc (mixed) ready at ${svc.ready.baseUrl} (pid ${svc.ready.pid})`)
    const target = await setUp(svc.ready, options.connections)
    const build = requestBuilder(target)
    const pool = new Pool(svc.ready.origin, { connections: options.connections, pipelining: 1 })
    try {
      const schedule = scheduleOf(mix)
      let at = 0
      const mixed = () => schedule[at++ % schedule.length]!
      const { pid } = svc.ready
      process.stdout.write(`mixed  ${options.connections} connections, ${options.durationS} s after ${options.warmupS} s ... `)
      const warmup = await drive("mix (warm-up)", pool, build, mixed, options.connections, options.warmupS, pid)
      await sleep(250)
      const measured = await drive("mix", pool, build, mixed, options.connections, options.durationS, pid)
      console.log(`${fmt(measured.requestsPerSecond, 0)} req/s, ${fmt(measured.serverCpuUsPerRequest, 0)} us CPU/req` + (measured.failed + measured.errors > 0 ? `, FAILED ${measured.failed} ERRORS ${measured.errors}` : ""))
      const solo: Array<MixedRun & { operation: OperationName }> = []
      const soloCachesMissing: Array<MixedRun & { operation: OperationName }> = []
      let soloWarmupsFailed = 0
      for (const { name } of options.soloS > 0 ? mix : []) {
        await sleep(250)
        process.stdout.write(`alone  ${name.padEnd(12)} ${options.soloS} s after 1 s ... `)
        const warm = await drive(`${name} alone (warm-up)`, pool, build, () => name, options.connections, 1, pid)
        soloWarmupsFailed += warm.failed + warm.errors
        const run = await drive(`${name} alone`, pool, build, () => name, options.connections, options.soloS, pid)
        solo.push({ ...run, operation: name })
        await setSvcCaches(svc, "missing")
        const missing = await drive(`${name} alone, caches missing`, pool, build, () => name, options.connections, options.soloS, pid)
        await setSvcCaches(svc, "kept")
        soloCachesMissing.push({ ...missing, operation: name })
        const failed = run.failed + run.errors + warm.failed + warm.errors + missing.failed + missing.errors
        console.log(
          `${fmt(run.requestsPerSecond, 0)} req/s, ${fmt(run.serverCpuUsPerRequest, 0)} us CPU/req; caches missing ${fmt(missing.serverCpuUsPerRequest, 0)} us` +
            (failed > 0 ? `, FAILED ${warm.failed}+${run.failed}+${missing.failed} ERRORS ${warm.errors}+${run.errors}+${missing.errors}` : "")
        )
      }
      const predicted = (runs: ReadonlyArray<MixedRun & { operation: OperationName }>) => {
        const parts = runs.map((run) => ({ share: measured.operations[run.operation]?.share ?? 0, cpu: run.serverCpuUsPerRequest }))
        return parts.length === 0 || parts.some((p) => p.cpu === null) ? null : round(parts.reduce((sum, p) => sum + p.share * p.cpu!, 0))
      }
      const allSucceeded = [warmup, measured, ...solo, ...soloCachesMissing].every((run) => run.failed + run.errors === 0) && soloWarmupsFailed === 0
      return {
        mix,
        warmup,
        measured,
        solo,
        soloCachesMissing,
        predictedCpuUsPerRequest: predicted(solo),
        predictedCachesMissingCpuUsPerRequest: predicted(soloCachesMissing),
        allSucceeded
      }
    } finally {
      await pool.close()
    }
  } finally {
    await model.close()
  }
}

/** The mixed scenario's report as text tables. */
export const mixedTables = (report: MixedReport): string => {
  const { measured } = report
  const perOperation = report.mix.map(({ name, weight }) => {
    const op = measured.operations[name]
    const alone = report.solo.find((run) => run.operation === name)
    const missing = report.soloCachesMissing.find((run) => run.operation === name)
    return [
      name,
      `${weight}%`,
      op === undefined ? "0" : String(op.requests),
      fmt(op?.requestsPerSecond ?? null, 0),
      fmt(op?.latencyMs.p50 ?? null, 2),
      fmt(op?.latencyMs.p99 ?? null, 2),
      String((op?.failed ?? 0) + (op?.errors ?? 0)),
      fmt(alone?.requestsPerSecond ?? null, 0),
      fmt(alone?.latencyMs.p50 ?? null, 2),
      fmt(alone?.latencyMs.p99 ?? null, 2),
      fmt(alone?.serverCpuUsPerRequest ?? null, 0),
      fmt(missing?.serverCpuUsPerRequest ?? null, 0),
      fmt(alone?.otherCpuUtilization ?? null, 2)
    ]
  })
  const whole = [
    "mix",
    "100%",
    String(measured.requests),
    fmt(measured.requestsPerSecond, 0),
    fmt(measured.latencyMs.p50, 2),
    fmt(measured.latencyMs.p99, 2),
    String(measured.failed + measured.errors),
    "",
    "",
    "",
    fmt(report.predictedCpuUsPerRequest, 0),
    fmt(report.predictedCachesMissingCpuUsPerRequest, 0),
    fmt(measured.otherCpuUtilization, 2)
  ]
  const failures = [...[report.warmup, measured, ...report.solo, ...report.soloCachesMissing].flatMap((run) =>
    Object.entries(run.operations).flatMap(([name, op]) => (op?.failures ?? []).map((f) => `  ${run.label} / ${name}: ${f}`))
  )]
  return (
    `mixed: ${measured.connections} connections, ${measured.seconds} s; server CPU ${fmt(measured.serverCpuUtilization, 2)} cores, ` +
    `load generator and fake model ${fmt(measured.loadgenCpuUtilization, 2)}, other ${fmt(measured.otherCpuUtilization, 2)}\n` +
    table(
      ["operation", "weight", "requests", "req/s", "p50 ms", "p99 ms", "failed", "alone req/s", "alone p50", "alone p99", "alone CPU us/req", "caches missing", "other CPU"],
      [...perOperation, whole],
      1
    ) +
    `\nserver CPU per request of the mix: ${fmt(measured.serverCpuUsPerRequest, 0)} us; as the solo runs predict it (their CPU per ` +
    `request weighted by the mix's shares, the "mix" row): ${fmt(report.predictedCpuUsPerRequest, 0)} us with the caches kept, ` +
    `${fmt(report.predictedCachesMissingCpuUsPerRequest, 0)} us with every cache missing` +
    (failures.length === 0 ? "" : `\nfailures (first few per operation):\n${failures.join("\n")}`)
  )
}
