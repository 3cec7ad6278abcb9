/**
 * `npm run bench`: load-tests the svc server against a hand-written baseline doing the same work
 * (bench/baseline-server.ts), from this separate process, and reports throughput, latency, errors,
 * CPU per request and the svc server's peak RSS. See docs/performance.md.
 *
 * Scenarios: `read` (the listing), `create` (bare `POST /knowledgebases`, then `keyed`: the same with
 * a new `Idempotency-Key` on every request, as the SDK and the CLI send), `patch` (a page append),
 * each svc against the baseline; then `mixed` (bench/mixed.ts): svc alone under a weighted mix of
 * cached reads, keyed creates, page patches, search, Agent turns, provisioning and MCP tool calls,
 * with the server's CPU per request of the mix and of each operation alone.
 *
 *   node dist/bench/run.js [--duration 10] [--warmup 2] [--connections 100]
 *                          [--post-connections 10] [--post-amount 2000] [--post-warmup 200]
 *                          [--patch-duration 5] [--patch-pages 100]
 *                          [--no-mixed] [--mixed-connections 20] [--mixed-duration 10] [--mixed-warmup 2] [--mixed-solo 3]
 *                          [--only read|create|patch|mixed]
 *                          [--wait-quiet 0] [--cache-misses] [--cpu-prof] [--keep-data]
 *                          [--database postgres://…] [--instances N]
 *
 * --only NAME: that scenario alone (`create` is the bare and the keyed creates); its results go to
 * `latest-<NAME>.json` so `latest.json` keeps the last whole run. --no-mixed leaves the mixed
 * scenario out (it is on by default; it runs on SQLite only). --cpu-prof profiles the platform's svc
 * server, or with `--only mixed` the mixed scenario's.
 *
 * --database URL: runs svc on that (empty) PostgreSQL database and reports svc's own figures only:
 * the baseline reads svc's SQLite file, so there is nothing to compare with on PostgreSQL.
 *
 * --instances N: svc on PostgreSQL, one instance then N behind a round-robin load balancer, beside
 * svc on SQLite, under the mixed scenario and each of its operations alone, the CPU split per
 * process (bench/instances-run.ts; `--database` is then a server it may create databases on, a
 * throwaway cluster when absent; the --mixed-* options apply; results in latest-instances.json).
 *
 * --wait-quiet N: before each scenario, wait up to N seconds for the rest of the machine to go
 * quiet (under a quarter of a core busy), for figures on a shared machine.
 *
 * --cache-misses: also run svc's read scenario with every `data_version` cache missing (the
 * credentials and the listing pages, as right after a commit; bench/cache-misses.ts), reported as
 * "svc, caches missing" beside the cached run.
 *
 * Exit code: 0 when every run (warm-ups included) got only 2xx answers and no connection errors,
 * 1 otherwise, 2 when the benchmark itself could not run.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { type Child, cleanupOnExit, type CpuPlan, launchSvc, planCpus, procStatusKb, runBenchmark, setSvcCaches, spawnChild, waitForQuiet } from "./children.js"
import { fmt, sleep, table } from "./report.js"
import { loadCells, loadColumns, type LoadResult, type LoadSpec, runLoad as runLoadOf } from "./load.js"
import { type DynamicLoadSpec, runDynamicLoad } from "./pages-load.js"
import { reportProfile } from "./profile-summary.js"
import { type BaselineReady, createsPerOrganization, type Ready, type SvcReady } from "./protocol.js"
import { type MixedReport, mixedTables, runMixed } from "./mixed.js"
import { randomUUID } from "node:crypto"
import { runInstances } from "./instances-run.js"

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, "../..")
const resultsDir = join(repoRoot, "bench", "results")

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "100" },
    "post-connections": { type: "string", default: "10" },
    "post-amount": { type: "string", default: "2000" },
    "post-warmup": { type: "string", default: "200" },
    "patch-duration": { type: "string", default: "5" },
    "patch-pages": { type: "string", default: "100" },
    "wait-quiet": { type: "string", default: "0" },
    "cache-misses": { type: "boolean", default: false },
    "cpu-prof": { type: "boolean", default: false },
    "keep-data": { type: "boolean", default: false },
    "no-mixed": { type: "boolean", default: false },
    "mixed-connections": { type: "string", default: "20" },
    "mixed-duration": { type: "string", default: "10" },
    "mixed-warmup": { type: "string", default: "2" },
    "mixed-solo": { type: "string", default: "3" },
    only: { type: "string" },
    database: { type: "string" },
    instances: { type: "string" }
  }
})
const onlyChoices = ["read", "create", "patch", "mixed"] as const
if (flags.only !== undefined && !(onlyChoices as ReadonlyArray<string>).includes(flags.only)) {
  console.error(`--only takes one of ${onlyChoices.join(", ")}`)
  process.exit(2)
}

const options = {
  readDurationS: Number(flags.duration),
  readWarmupS: Number(flags.warmup),
  readConnections: Number(flags.connections),
  postConnections: Number(flags["post-connections"]),
  postAmount: Number(flags["post-amount"]),
  postWarmup: Number(flags["post-warmup"]),
  patchDurationS: Number(flags["patch-duration"]),
  patchPages: Number(flags["patch-pages"]),
  seededKnowledgebases: 25,
  pageLimit: 20,
  waitQuietS: Number(flags["wait-quiet"]),
  cacheMisses: flags["cache-misses"] === true,
  cpuProfile: flags["cpu-prof"],
  database: flags.database,
  only: flags.only as (typeof onlyChoices)[number] | undefined,
  mixed: flags["no-mixed"] !== true && flags.database === undefined && (flags.only === undefined || flags.only === "mixed"),
  mixedConnections: Number(flags["mixed-connections"]),
  mixedDurationS: Number(flags["mixed-duration"]),
  mixedWarmupS: Number(flags["mixed-warmup"]),
  mixedSoloS: Number(flags["mixed-solo"])
}
/** Whether scenario `name` runs (`--only`). */
const selected = (name: (typeof onlyChoices)[number]): boolean => options.only === undefined || options.only === name
/** The servers compared: svc and the baseline on SQLite, svc alone on PostgreSQL. */
const servers: ReadonlyArray<ServerName> = options.database === undefined ? ["svc", "baseline"] : ["svc"]
/**
 * Agency organizations per server for the creates, bare then keyed: each takes 200 (its plan's cap),
 * each create goes to the current one, and there is room for the few requests autocannon prepares
 * past the end of each run.
 */
const postOrgs = Math.ceil((2 * (options.postAmount + options.postWarmup + 2 * options.postConnections)) / createsPerOrganization) + 2

/** How a run's server is named in the report. */
const serverLabel = (server: ServerName, caches: Caches): string => (caches === "missing" ? `${server}, caches missing` : server)

/** The project's targets (docs/performance.md). */
const targets = { readRatioMin: 0.5, readP99MaxMs: 25 }

type ServerName = "svc" | "baseline"
type ScenarioName = "read" | "create" | "keyed" | "patch"
/** Whether svc's `data_version` caches kept their entries during a run, or missed on every request. */
type Caches = "kept" | "missing"

interface Run {
  readonly scenario: ScenarioName
  readonly server: ServerName
  readonly caches: Caches
  readonly description: string
  /** Cores busy elsewhere on the machine just before the run (with --wait-quiet). */
  readonly otherCpuBefore: number | null
  readonly warmup: LoadResult
  readonly result: LoadResult
}

const children: Array<Child<Ready>> = []
let dataDir: string | null = null

const cleanup = cleanupOnExit(children, () => dataDir, flags["keep-data"] === true, "the servers")

const main = async (): Promise<number> => {
  if (flags.instances !== undefined) return instancesBench()
  const started = Date.now()
  mkdirSync(resultsDir, { recursive: true })
  dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"))

  const plan = await planCpus()
  const { serverCpu } = plan
  console.log(plan.describe("svc bench", { server: "servers", runner: "load generator" }))
  if (options.only === "mixed") return mixedOnly(started, plan, dataDir)

  const profileDir = join(resultsDir, "profiles")
  const svc = await launchSvc<SvcReady>({
    dataDir,
    cpu: serverCpu,
    logFile: join(resultsDir, "svc.stderr.log"),
    profileDir: options.cpuProfile ? profileDir : undefined,
    args: ["--post-orgs", String(postOrgs), ...(options.database === undefined ? [] : ["--database", options.database])]
  })
  children.push(svc)
  console.log(`svc ready at ${svc.ready.baseUrl} (pid ${svc.ready.pid})`)

  // Seed the default organization: more than a page, so the page is full and has a nextCursor.
  const auth = { authorization: `Bearer ${svc.ready.bootstrapKey}` }
  for (let i = 1; i <= options.seededKnowledgebases; i++) {
    const response = await fetch(`${svc.ready.baseUrl}/knowledgebases`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: `Seeded Knowledgebase ${String(i).padStart(2, "0")}`, description: "Seeded by the benchmark." })
    })
    if (response.status !== 201) throw new Error(`seeding: POST answered ${response.status}: ${await response.text()}`)
  }

  const baseline = options.database !== undefined ? null : await spawnChild<BaselineReady>({
    name: "baseline",
    script: join(here, "baseline-server.js"),
    args: ["--db", join(dataDir, "svc.sqlite"), "--port", "0"],
    cpu: serverCpu,
    logFile: join(resultsDir, "baseline.stderr.log")
  })
  if (baseline !== null) {
    children.push(baseline)
    console.log(`baseline ready at ${baseline.ready.baseUrl} (pid ${baseline.ready.pid})`)
  }

  // Both must answer the same bytes, or the comparison means nothing.
  const readPath = `/knowledgebases?limit=${options.pageLimit}`
  const svcPage = await fetch(`${svc.ready.baseUrl}${readPath}`, { headers: auth })
  const svcBody = await svcPage.text()
  const baselineBody = baseline === null ? null : await (await fetch(`${baseline.ready.baseUrl}${readPath}`, { headers: auth })).text()
  const page = JSON.parse(svcBody) as { knowledgebases?: Array<unknown>; nextCursor?: string | null }
  if (svcPage.status !== 200 || page.knowledgebases?.length !== options.pageLimit || typeof page.nextCursor !== "string") {
    throw new Error(`svc list is not a full page with a nextCursor (${svcPage.status}): ${svcBody.slice(0, 300)}`)
  }
  const bodiesIdentical = baselineBody === null ? null : svcBody === baselineBody
  console.log(
    baselineBody === null
      ? `GET ${readPath}: svc ${svcBody.length} B on PostgreSQL (no baseline)`
      : `GET ${readPath}: svc ${svcBody.length} B, baseline ${baselineBody.length} B, ` +
          (bodiesIdentical ? "byte-identical bodies" : "BODIES DIFFER (comparison is not like for like)")
  )

  const targetsOf: Record<ServerName, Child<Ready>> = { svc, baseline: baseline ?? svc }
  const runs: Array<Run> = []
  const scenario = async (
    name: ScenarioName,
    server: ServerName,
    description: string,
    warmup: LoadSpec | DynamicLoadSpec,
    measured: LoadSpec | DynamicLoadSpec,
    caches: Caches = "kept"
  ) => {
    const runLoad = (spec: LoadSpec | DynamicLoadSpec, pid: number) => ("next" in spec ? runDynamicLoad(spec, pid) : runLoadOf(spec, pid))
    const pid = targetsOf[server].ready.pid
    const otherCpuBefore = options.waitQuietS > 0 ? await waitForQuiet(options.waitQuietS * 1000) : null
    process.stdout.write(`${name.padEnd(6)} ${serverLabel(server, caches).padEnd(8)} ${description} ... `)
    if (caches === "missing") await setSvcCaches(svc, "missing")
    const warm = await runLoad(warmup, pid)
    await sleep(250)
    const result = await runLoad(measured, pid)
    if (caches === "missing") await setSvcCaches(svc, "kept")
    runs.push({ scenario: name, server, caches, description, otherCpuBefore, warmup: warm, result })
    console.log(
      `${fmt(result.requestsPerSecond, 0)} req/s, p99 ${fmt(result.latencyMs.p99, 2)} ms` +
        (result.non2xx + warm.non2xx + result.errors + warm.errors > 0
          ? `, NON-2XX ${warm.non2xx}+${result.non2xx} ERRORS ${warm.errors}+${result.errors} ${JSON.stringify(result.statusCounts)}`
          : "")
    )
    await sleep(250)
  }

  const readRuns: ReadonlyArray<readonly [ServerName, Caches]> = !selected("read") ? [] : [
    ["svc", "kept"],
    ...(options.cacheMisses ? [["svc", "missing"] as const] : []),
    ...(baseline === null ? [] : [["baseline", "kept"] as const])
  ]
  for (const [server, caches] of readRuns) {
    const url = `${targetsOf[server].ready.baseUrl}${readPath}`
    const read = { url, method: "GET", headers: auth, connections: options.readConnections } as const
    await scenario(
      "read",
      server,
      `GET ${readPath}, ${options.readConnections} connections, ${options.readDurationS} s after ${options.readWarmupS} s warm-up`,
      { ...read, durationS: options.readWarmupS },
      { ...read, durationS: options.readDurationS },
      caches
    )
  }
  // Both answer a keyed create's replay from the row they stored with it, the same way.
  const replays = !selected("create") ? null : await Promise.all(servers.map((server) => replayCheck(targetsOf[server].ready.baseUrl, svc.ready.bootstrapKey)))
  if (replays !== null) console.log(`keyed create replayed: ${servers.map((server, i) => `${server} ${replays[i]}`).join(", ")}`)
  for (const server of servers) {
    if (!selected("create")) break
    const keys = svc.ready.postKeys[server]
    // One count for the bare and the keyed creates: the keyed ones go on in the next organizations.
    let sent = 0
    const createOf = (keyed: boolean) => ({
      origin: targetsOf[server].ready.origin,
      headers: { "content-type": "application/json" },
      next: () => ({
        method: "POST" as const,
        path: "/api/v1/knowledgebases",
        body: JSON.stringify({ name: "Bench Knowledgebase" }),
        headers: {
          authorization: `Bearer ${keys[Math.floor(sent++ / createsPerOrganization)]}`,
          ...(keyed ? { "idempotency-key": randomUUID() } : {})
        }
      }),
      connections: options.postConnections
    })
    const create = createOf(false)
    await scenario(
      "create",
      server,
      `POST /knowledgebases, ${options.postConnections} connections, ${options.postAmount} requests after ${options.postWarmup} (${createsPerOrganization} per organization)`,
      { ...create, amount: options.postWarmup },
      { ...create, amount: options.postAmount }
    )
    sent = Math.ceil(sent / createsPerOrganization) * createsPerOrganization
    const keyed = createOf(true)
    await scenario(
      "keyed",
      server,
      `POST /knowledgebases + a new Idempotency-Key each, ${options.postConnections} connections, ${options.postAmount} requests after ${options.postWarmup}`,
      { ...keyed, amount: options.postWarmup },
      { ...keyed, amount: options.postAmount }
    )
  }

  // Page patches: one Knowledgebase of `patchPages` pages of about 3 KB, each request appending a
  // line to the next page in turn (so no two requests of a run race on one page), svc then baseline.
  const patchBase = `${svc.ready.baseUrl}/knowledgebases`
  const patchKb = await fetch(patchBase, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "Patched pages" })
  })
  const patchKbId = ((await patchKb.json()) as { knowledgebase: { id: string } }).knowledgebase.id
  const pageIds: Array<string> = []
  const paragraph = "A paragraph of the benchmark's page, long enough to be a real page body. ".repeat(6)
  for (let i = 1; i <= options.patchPages; i++) {
    const created = await fetch(`${patchBase}/${patchKbId}/pages`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: `Page ${i}`, bodyMarkdown: `# Page ${i}\n\n${Array.from({ length: 7 }, () => paragraph).join("\n\n")}\n` })
    })
    if (created.status !== 201) throw new Error(`seeding pages: POST answered ${created.status}: ${await created.text()}`)
    pageIds.push(((await created.json()) as { page: { id: string } }).page.id)
  }
  for (const server of servers) {
    if (!selected("patch")) break
    let patchAt = 0
    const patch = {
      origin: targetsOf[server].ready.origin,
      headers: { ...auth, "content-type": "application/json" },
      next: () => ({
        method: "PATCH" as const,
        path: `/api/v1/knowledgebases/${patchKbId}/pages/${pageIds[patchAt++ % pageIds.length]}`,
        body: JSON.stringify({ patch: [{ op: "append", text: "\nA line appended by the benchmark.\n" }] })
      }),
      connections: options.postConnections
    }
    await scenario(
      "patch",
      server,
      `PATCH /knowledgebases/:id/pages/:pageId (one append), ${options.postConnections} connections, ${options.patchDurationS} s after 1 s`,
      { ...patch, durationS: 1 },
      { ...patch, durationS: options.patchDurationS }
    )
  }

  const memory = (child: Child<Ready>) => ({
    peakRssMb: Number(((procStatusKb(child.ready.pid, "VmHWM") ?? 0) / 1024).toFixed(1)),
    rssMb: Number(((procStatusKb(child.ready.pid, "VmRSS") ?? 0) / 1024).toFixed(1))
  })
  const svcMemory = memory(svc)
  const baselineMemory = baseline === null ? null : memory(baseline)

  const mixed = options.mixed ? await mixedScenario(plan, dataDir) : null

  // ---- report ----
  const find = (s: ScenarioName, server: ServerName, caches: Caches = "kept") =>
    runs.find((r) => r.scenario === s && r.server === server && r.caches === caches)?.result
  const rows = runs.map(({ scenario: s, server, caches, result: r }) => [
    s,
    serverLabel(server, caches),
    String(r.connections),
    String(r.requests),
    ...loadCells(r)
  ])
  const compared: ReadonlyArray<readonly [ScenarioName, Caches]> = (baseline === null ? [] : [
    ["read", "kept"],
    ...(options.cacheMisses ? [["read", "missing"] as const] : []),
    ["create", "kept"],
    ["keyed", "kept"],
    ["patch", "kept"]
  ] as const).filter(([s]) => find(s, "svc") !== undefined)
  const ratios = compared.map(([s, caches]) => {
    const a = find(s, "svc", caches)!
    const b = find(s, "baseline")!
    return {
      scenario: s,
      caches,
      throughput: Number((a.requestsPerSecond / b.requestsPerSecond).toFixed(3)),
      p50: Number((a.latencyMs.p50 / b.latencyMs.p50).toFixed(2)),
      p99: Number((a.latencyMs.p99 / b.latencyMs.p99).toFixed(2)),
      steadyP99:
        a.steadyLatencyMs.requests > 0 && b.steadyLatencyMs.requests > 0
          ? Number((a.steadyLatencyMs.p99 / b.steadyLatencyMs.p99).toFixed(2))
          : null,
      cpuPerRequest:
        a.serverCpuUsPerRequest !== null && b.serverCpuUsPerRequest !== null
          ? Number((a.serverCpuUsPerRequest / b.serverCpuUsPerRequest).toFixed(2))
          : null
    }
  })
  for (const r of ratios) {
    rows.push([
      r.scenario,
      r.caches === "missing" ? "svc, misses/base" : "svc/base",
      "",
      "",
      `${(r.throughput * 100).toFixed(0)}%`,
      `${r.p50.toFixed(1)}x`,
      `${r.p99.toFixed(1)}x`,
      "",
      r.steadyP99 === null ? "" : `${r.steadyP99.toFixed(1)}x`,
      "",
      "",
      r.cpuPerRequest === null ? "-" : `${r.cpuPerRequest.toFixed(1)}x`,
      "",
      "",
      ""
    ])
  }
  console.log("")
  console.log(
    table(
      ["scenario", "server", "conns", "requests", ...loadColumns],
      rows,
      2
    )
  )
  console.log(
    `\npeak RSS (VmHWM): svc ${svcMemory.peakRssMb} MB` + (baselineMemory === null ? "" : `, baseline ${baselineMemory.peakRssMb} MB`) +
      `\np99 >1s = p99 of the requests sent 1 s or more into the run (without the first request of each new connection);` +
      `\nCPU us/req = server CPU time per response; srv/gen/other CPU = cores kept busy by the server, the load` +
      `\ngenerator and everything else on the machine (noise: figures from runs with other CPU > ~0.2 are not reliable)`
  )

  const read = find("read", "svc")
  const readRatio = ratios.find((r) => r.scenario === "read" && r.caches === "kept")?.throughput
  const unexpected = runs.filter(
    (r) => r.result.non2xx + r.result.errors + r.warmup.non2xx + r.warmup.errors > 0
  )
  const verdict = {
    ...(readRatio === undefined
      ? {}
      : {
          readThroughputAtLeastHalfOfBaseline: {
            target: `>= ${targets.readRatioMin * 100}%`,
            actual: `${(readRatio * 100).toFixed(1)}%`,
            met: readRatio >= targets.readRatioMin
          }
        }),
    ...(read === undefined
      ? {}
      : {
          readP99Under25ms: {
            target: `< ${targets.readP99MaxMs} ms`,
            actual:
              `${read.latencyMs.p99} ms` +
              (read.steadyLatencyMs.requests > 0 ? ` (${read.steadyLatencyMs.p99} ms without the first second)` : ""),
            met: read.latencyMs.p99 < targets.readP99MaxMs
          }
        }),
    ...Object.fromEntries(
      ratios
        .filter((r) => r.scenario !== "read")
        .map((r) => [
          `${r.scenario}ThroughputAtLeastHalfOfBaseline`,
          { target: `>= ${targets.readRatioMin * 100}%`, actual: `${(r.throughput * 100).toFixed(1)}%`, met: r.throughput >= targets.readRatioMin }
        ])
    ),
    noErrorResponses: {
      target: "0 non-2xx, 0 errors",
      actual:
        unexpected.length === 0 && mixed?.allSucceeded !== false
          ? "none"
          : [...unexpected.map((r) => `${r.scenario}/${r.server}`), ...(mixed?.allSucceeded === false ? ["mixed"] : [])].join(", "),
      met: unexpected.length === 0 && mixed?.allSucceeded !== false
    }
  }
  const noisiest = Math.max(...runs.map((r) => r.result.otherCpuUtilization ?? 0))
  const noisy = noisiest > 0.25
  if (noisy) {
    console.log(
      `\nWARNING: other processes kept up to ${noisiest.toFixed(2)} cores busy during the runs; ` +
        "the throughput and latency figures are not reliable (CPU us/req is the steadier figure). Re-run on a quiet machine" +
        " or with --wait-quiet 30."
    )
  }
  if (mixed !== null) console.log(`\n${mixedTables(mixed)}`)
  console.log("\ntargets:")
  for (const [name, v] of Object.entries(verdict)) console.log(`  ${v.met ? "MET    " : "NOT MET"}  ${name}: ${v.actual} (target ${v.target})`)
  if (runs.some((r) => (r.result.statusCounts["429"] ?? 0) + (r.warmup.statusCounts["429"] ?? 0) > 0)) {
    console.log("  note: 429 answers mean svc's per-key rate limit was not raised (startServer requestsPerMinute)")
  }

  // Stop the servers (svc cleanly, so --cpu-prof writes its profile).
  await cleanup()

  const profile = options.cpuProfile ? reportProfile(profileDir, join(resultsDir, "profile-summary.txt")) : null

  const report = {
    date: new Date(started).toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: plan.json("servers", "loadGenerator"),
    cpuProfiled: options.cpuProfile,
    options: { ...options, database: options.database === undefined ? undefined : "postgres" },
    backend: options.database === undefined ? "sqlite" : "postgres",
    bodiesIdentical,
    noisy,
    readBodyBytes: svcBody.length,
    memory: { svc: svcMemory, baseline: baselineMemory },
    runs,
    ratios,
    keyedCreateReplays: replays === null ? null : Object.fromEntries(servers.map((server, i) => [server, replays[i]])),
    mixed,
    targets: verdict,
    wallSeconds: Number(((Date.now() - started) / 1000).toFixed(1))
  }
  const out = join(
    resultsDir,
    options.cpuProfile
      ? "profile-run.json"
      : `latest${options.database === undefined ? "" : "-postgres"}${options.only === undefined ? "" : `-${options.only}`}.json`
  )
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`\nresults: ${out} (${report.wallSeconds} s)`)
  return verdict.noErrorResponses.met ? 0 : 1
}

/** `--instances N`: the bench of several instances (bench/instances-run.ts). */
const instancesBench = (): Promise<number> => {
  const instances = Number(flags.instances)
  if (!Number.isInteger(instances) || instances < 1) throw new Error("--instances takes a whole number of instances, 1 or more")
  return runInstances({
    instances,
    database: options.database,
    connections: options.mixedConnections,
    warmupS: options.mixedWarmupS,
    durationS: options.mixedDurationS,
    soloS: options.mixedSoloS,
    resultsDir,
    keepData: flags["keep-data"] === true
  })
}

/** Runs the mixed scenario (bench/mixed.ts) on a server of its own, pinned where the platform's servers were. */
const mixedScenario = (plan: CpuPlan, dir: string): Promise<MixedReport> =>
  runMixed(
    {
      dataDir: join(dir, "mixed"),
      resultsDir,
      cpu: plan.serverCpu,
      connections: options.mixedConnections,
      warmupS: options.mixedWarmupS,
      durationS: options.mixedDurationS,
      soloS: options.mixedSoloS,
      profileDir: options.cpuProfile && options.only === "mixed" ? join(resultsDir, "mixed-profiles") : undefined
    },
    children
  )

/** `--only mixed`: the mixed scenario alone, its results in `latest-mixed.json`. */
const mixedOnly = async (started: number, plan: CpuPlan, dir: string): Promise<number> => {
  const mixed = await mixedScenario(plan, dir)
  console.log(`\n${mixedTables(mixed)}`)
  await cleanup()
  if (options.cpuProfile) reportProfile(join(resultsDir, "mixed-profiles"), join(resultsDir, "mixed-profile-summary.txt"))
  const report = {
    date: new Date(started).toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: plan.json("servers", "loadGenerator"),
    options,
    backend: "sqlite",
    mixed,
    wallSeconds: Number(((Date.now() - started) / 1000).toFixed(1))
  }
  const out = join(resultsDir, options.cpuProfile ? "mixed-profile-run.json" : "latest-mixed.json")
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`\nresults: ${out} (${report.wallSeconds} s)`)
  return mixed.allSucceeded ? 0 : 1
}

/**
 * Sends one keyed create twice to the server at `baseUrl` and checks the second is the first's
 * stored answer (201, `Idempotent-Replayed: true`, the same Knowledgebase) and that the same key with
 * another body is 409 `conflict`; answers "yes", or throws.
 */
const replayCheck = async (baseUrl: string, key: string): Promise<"yes"> => {
  const idempotencyKey = randomUUID()
  const send = (name: string) =>
    fetch(`${baseUrl}/knowledgebases`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify({ name })
    })
  const first = await send("Replayed")
  const firstBody = (await first.json()) as { knowledgebase?: { id?: string } }
  const again = await send("Replayed")
  const againBody = (await again.json()) as { knowledgebase?: { id?: string } }
  const other = await send("Another body")
  const otherBody = (await other.json()) as { error?: { code?: string } }
  if (
    first.status !== 201 ||
    first.headers.get("idempotent-replayed") !== null ||
    again.status !== 201 ||
    again.headers.get("idempotent-replayed") !== "true" ||
    againBody.knowledgebase?.id !== firstBody.knowledgebase?.id ||
    other.status !== 409 ||
    otherBody.error?.code !== "conflict"
  ) {
    throw new Error(
      `${baseUrl}: keyed create not replayed: ${first.status} ${JSON.stringify(firstBody)}, then ${again.status} ` +
        `(replayed: ${again.headers.get("idempotent-replayed")}) ${JSON.stringify(againBody)}, other body ${other.status} ${JSON.stringify(otherBody)}`
    )
  }
  return "yes"
}

runBenchmark(main, children, cleanup)
