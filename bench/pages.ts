/**
 * `node dist/bench/pages.js`: a Knowledgebase of 10,000 pages in nested folders, under load. Starts
 * the svc server as a child process (bench/svc-launcher.ts, rate limit raised), creates a
 * Knowledgebase through the API, seeds 10,000 pages and folders straight into its SQLite file
 * (bench/pages-seed.ts), checks the API serves them, then loads three endpoints with autocannon from
 * this process: the page-tree listing at depth 3, a full page read rotating over every page, and a
 * 10-operation patch on a page not patched before. Reports req/s, latency, non-2xx, errors and the
 * server's CPU per request. See docs/performance.md, "Pages: a Knowledgebase of 10,000 pages".
 *
 *   node dist/bench/pages.js [--duration 8] [--warmup 2] [--connections 50]
 *                            [--patch-duration 5] [--patch-warmup 50] [--patch-connections 10]
 *                            [--pages 10000] [--wait-quiet 0] [--cache-misses] [--keep-data]
 *
 * --cache-misses: also run the tree and read scenarios with every `data_version` cache of the server
 * missing (the page trees and the credentials, as right after a commit; bench/cache-misses.ts),
 * reported as "…, caches missing" beside the cached runs.
 *
 * Exit code: 0 when every run (warm-ups included) got only 2xx answers and no connection errors,
 * 1 otherwise, 2 when the benchmark itself could not run.
 */
import Database from "better-sqlite3"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { applyPatch } from "../server/knowledge/pages/patch.js"
import { type Child, cleanupOnExit, launchSvc, planCpus, procStatusKb, runBenchmark, setSvcCaches, waitForQuiet } from "./children.js"
import { fmt, sleep, table } from "./report.js"
import { loadCells, loadColumns } from "./load.js"
import { type DynamicLoadResult, type DynamicLoadSpec, type NextRequest, runDynamicLoad } from "./pages-load.js"
import { patchOperations, type SeedResult, seedPages } from "./pages-seed.js"
import type { SvcReady } from "./protocol.js"

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, "../..")
const resultsDir = join(repoRoot, "bench", "results")

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "50" },
    "patch-duration": { type: "string", default: "5" },
    "patch-warmup": { type: "string", default: "50" },
    "patch-connections": { type: "string", default: "10" },
    pages: { type: "string", default: "10000" },
    "wait-quiet": { type: "string", default: "0" },
    "cache-misses": { type: "boolean", default: false },
    "keep-data": { type: "boolean", default: false }
  }
})

const options = {
  readDurationS: Number(flags.duration),
  readWarmupS: Number(flags.warmup),
  readConnections: Number(flags.connections),
  patchDurationS: Number(flags["patch-duration"]),
  patchWarmup: Number(flags["patch-warmup"]),
  patchConnections: Number(flags["patch-connections"]),
  totalPages: Number(flags.pages),
  treeDepth: 3,
  treeLimit: 200,
  patchOperations: 10,
  listingsAfterWrite: 10,
  waitQuietS: Number(flags["wait-quiet"]),
  cacheMisses: flags["cache-misses"] === true
}

type ScenarioName = "tree" | "read" | "patch"
/** Whether the server's `data_version` caches kept their entries during a run, or missed on every request. */
type Caches = "kept" | "missing"

/** How a run is named in the report. */
const runLabel = (scenario: ScenarioName, caches: Caches): string => (caches === "missing" ? `${scenario}, caches missing` : scenario)

interface Run {
  readonly scenario: ScenarioName
  readonly caches: Caches
  readonly description: string
  readonly otherCpuBefore: number | null
  readonly warmup: DynamicLoadResult
  readonly result: DynamicLoadResult
}

const children: Array<Child<SvcReady>> = []
let dataDir: string | null = null

const cleanup = cleanupOnExit(children, () => dataDir, flags["keep-data"] === true, "the server")

/** A deterministic shuffle (so two runs read and patch pages in the same order). */
const shuffled = <A>(items: ReadonlyArray<A>, seed: number): Array<A> => {
  const out = [...items]
  let state = seed >>> 0
  const random = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state / 4294967296
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

const main = async (): Promise<number> => {
  const started = Date.now()
  mkdirSync(resultsDir, { recursive: true })
  dataDir = mkdtempSync(join(tmpdir(), "svc-bench-pages-"))

  const plan = await planCpus()
  const { serverCpu } = plan
  console.log(plan.describe("svc pages bench", { server: "server", runner: "load generator" }))
  const svc = await launchSvc<SvcReady>({ dataDir, cpu: serverCpu, logFile: join(resultsDir, "pages-svc.stderr.log") })
  children.push(svc)
  console.log(`svc ready at ${svc.ready.baseUrl} (pid ${svc.ready.pid})`)
  const auth = { authorization: `Bearer ${svc.ready.bootstrapKey}` }
  const api = async (method: "GET" | "POST" | "PATCH", path: string, body?: unknown) => {
    const response = await fetch(`${svc.ready.baseUrl}${path}`, {
      method,
      headers: body === undefined ? auth : { ...auth, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, text, json: () => JSON.parse(text) as unknown }
  }

  // ---- the Knowledgebase, through the API; its pages, straight into SQL ----
  const created = await api("POST", "/knowledgebases", { name: "Handbook (10,000 pages)", description: "Seeded by the pages benchmark." })
  if (created.status !== 201) throw new Error(`POST /knowledgebases answered ${created.status}: ${created.text}`)
  const knowledgebaseId = (created.json() as { knowledgebase: { id: string } }).knowledgebase.id
  const dbFile = join(dataDir, "svc.sqlite")
  const organizationId = (() => {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true })
    try {
      const row = db.prepare("SELECT organization_id FROM knowledgebases WHERE id = ?").get(knowledgebaseId) as
        | { organization_id: string }
        | undefined
      if (!row) throw new Error(`Knowledgebase ${knowledgebaseId} is not in ${dbFile}`)
      return row.organization_id
    } finally {
      db.close()
    }
  })()
  process.stdout.write(`seeding ${options.totalPages} pages and folders into Knowledgebase ${knowledgebaseId} ... `)
  const seed: SeedResult = seedPages({ dbFile, organizationId, knowledgebaseId, total: options.totalPages })
  console.log(
    `${seed.folders} folders + ${seed.pages.length} pages, ${seed.maxDepth} levels, bodies ${seed.pageBytes.min}–${seed.pageBytes.max} B ` +
      `(mean ${seed.pageBytes.mean}), ${seed.pagesWithLinks} pages with ${seed.linkRows} svcpage:// links, ` +
      `${seed.seconds} s, database ${(seed.databaseBytes / 1024 / 1024).toFixed(0)} MB` +
      (seed.checkpoint.busy === 0 ? "" : ` (WAL checkpoint busy: ${JSON.stringify(seed.checkpoint)})`)
  )

  // ---- the API serves them ----
  const kbBase = `/knowledgebases/${knowledgebaseId}`
  const treePath = `${kbBase}/pages?depth=${options.treeDepth}&limit=${options.treeLimit}`
  const coldStart = performance.now()
  const tree = await api("GET", treePath)
  const coldTreeMs = performance.now() - coldStart
  type IndexItem = { id: string; depth: number; isFolder: boolean; childCount: number; pageCount: number; collapsed: boolean }
  const listing = tree.json() as { pages?: Array<IndexItem>; nextCursor?: string | null }
  const items = listing.pages ?? []
  if (
    tree.status !== 200 ||
    items.length !== options.treeLimit ||
    typeof listing.nextCursor !== "string" ||
    items.some((item) => item.depth > options.treeDepth) ||
    !items.some((item) => item.depth === options.treeDepth && item.collapsed)
  ) {
    throw new Error(`GET ${treePath}: not a full page of depth <= ${options.treeDepth} with a nextCursor (${tree.status}): ${tree.text.slice(0, 400)}`)
  }
  const topPageCount = items.filter((i) => i.depth === 1).reduce((sum, i) => sum + i.pageCount, 0)
  const warmStart = performance.now()
  const treeAgain = await api("GET", treePath)
  const warmTreeMs = performance.now() - warmStart
  const kb = await api("GET", kbBase)
  const kbPages = (kb.json() as { knowledgebase?: { counts?: { pages?: number } } }).knowledgebase?.counts?.pages
  console.log(
    `GET ${treePath}: ${tree.text.length} B, ${items.length} items (depth 1–${options.treeDepth}), nextCursor; ` +
      `first ${coldTreeMs.toFixed(1)} ms (tree read from SQL), next ${warmTreeMs.toFixed(1)} ms (${treeAgain.status}); ` +
      `Knowledgebase counts.pages = ${kbPages ?? "?"}`
  )
  if (kb.status !== 200 || kbPages !== seed.pages.length) {
    throw new Error(`GET ${kbBase}: counts.pages is ${kbPages}, expected ${seed.pages.length} (${kb.status}): ${kb.text.slice(0, 300)}`)
  }

  // One page read and patched through the API, checked against the patch applied here.
  const probe = shuffled(
    seed.pages.filter((p) => p.links > 0 && p.depth === 5),
    7
  )[0]
  if (!probe) throw new Error("no seeded page with links at depth 5")
  const readProbe = await api("GET", `${kbBase}/pages/${probe.id}`)
  const probePage = (readProbe.json() as { page?: { markdown?: string; relatedPages?: Array<unknown>; children?: Array<unknown> } }).page
  if (readProbe.status !== 200 || probePage?.markdown === undefined || (probePage.relatedPages?.length ?? 0) !== probe.links) {
    throw new Error(`GET page ${probe.id}: ${readProbe.status} ${readProbe.text.slice(0, 300)}`)
  }
  const probeOps = patchOperations(0)
  const expected = applyPatch(probePage.markdown, probeOps)
  const patched = await api("PATCH", `${kbBase}/pages/${probe.id}`, { patch: probeOps })
  const reread = await api("GET", `${kbBase}/pages/${probe.id}`)
  const rereadMarkdown = (reread.json() as { page?: { markdown?: string } }).page?.markdown
  if (patched.status !== 200 || expected._tag !== "Applied" || rereadMarkdown !== expected.markdown) {
    throw new Error(`PATCH page ${probe.id} with ${probeOps.length} operations: ${patched.status} ${patched.text.slice(0, 400)}`)
  }
  console.log(
    `GET page: ${readProbe.text.length} B; PATCH with ${probeOps.length} operations: 200, body as expected ` +
      `(${probePage.markdown.length} → ${expected.markdown.length} chars)`
  )

  // ---- load ----
  const headers = { ...auth, "content-type": "application/json" }
  const pid = svc.ready.pid
  const origin = svc.ready.origin
  const prefix = `/api/v1${kbBase}`
  const runs: Array<Run> = []
  const scenario = async (
    name: ScenarioName,
    description: string,
    warmup: Omit<DynamicLoadSpec, "origin" | "headers">,
    measured: Omit<DynamicLoadSpec, "origin" | "headers">,
    caches: Caches = "kept"
  ) => {
    const otherCpuBefore = options.waitQuietS > 0 ? await waitForQuiet(options.waitQuietS * 1000) : null
    process.stdout.write(`${runLabel(name, caches).padEnd(6)} ${description} ... `)
    if (caches === "missing") await setSvcCaches(svc, "missing")
    const warm = await runDynamicLoad({ ...warmup, origin, headers }, pid)
    await sleep(250)
    const result = await runDynamicLoad({ ...measured, origin, headers }, pid)
    if (caches === "missing") await setSvcCaches(svc, "kept")
    runs.push({ scenario: name, caches, description, otherCpuBefore, warmup: warm, result })
    const bad = result.non2xx + warm.non2xx + result.errors + warm.errors
    console.log(
      `${fmt(result.requestsPerSecond, 0)} req/s, p50 ${fmt(result.latencyMs.p50, 2)} ms, p99 ${fmt(result.latencyMs.p99, 2)} ms` +
        (bad > 0
          ? `, NON-2XX ${warm.non2xx}+${result.non2xx} ERRORS ${warm.errors}+${result.errors} ${JSON.stringify(result.statusCounts)} ` +
            JSON.stringify([...warm.failures, ...result.failures].slice(0, 2))
          : "")
    )
    await sleep(250)
  }

  // 1. the page-tree listing at depth 3 (served from the arranged tree cached until the next commit)
  const treeRequest = (): NextRequest => ({ method: "GET", path: `/api/v1${treePath}` })
  const cacheModes: ReadonlyArray<Caches> = options.cacheMisses ? ["kept", "missing"] : ["kept"]
  for (const caches of cacheModes) {
    await scenario(
      "tree",
      `GET ${treePath.replace(kbBase, "/knowledgebases/:id")}, ${options.readConnections} connections, ${options.readDurationS} s after ${options.readWarmupS} s warm-up`,
      { next: treeRequest, connections: options.readConnections, durationS: options.readWarmupS },
      { next: treeRequest, connections: options.readConnections, durationS: options.readDurationS },
      caches
    )
  }

  // 2. full page reads, every request the next of all pages in a fixed shuffled order
  const readOrder = shuffled(seed.pages, 11).map((p) => p.id)
  let readAt = 0
  const readRequest = (): NextRequest => ({ method: "GET", path: `${prefix}/pages/${readOrder[readAt++ % readOrder.length]!}` })
  for (const caches of cacheModes) {
    await scenario(
      "read",
      `GET /knowledgebases/:id/pages/:pageId over ${readOrder.length} pages, ${options.readConnections} connections, ${options.readDurationS} s after ${options.readWarmupS} s warm-up`,
      { next: readRequest, connections: options.readConnections, durationS: options.readWarmupS },
      { next: readRequest, connections: options.readConnections, durationS: options.readDurationS },
      caches
    )
  }
  const readsSent = readAt

  // 3. 10-operation patches, every request on a page no request patched before (the probe excluded)
  const patchOrder = shuffled(
    seed.pages.filter((p) => p.id !== probe.id),
    13
  )
  let patchAt = 0
  const patchRequest = (): NextRequest => {
    const n = ++patchAt
    const page = patchOrder[(n - 1) % patchOrder.length]!
    return { method: "PATCH", path: `${prefix}/pages/${page.id}`, body: JSON.stringify({ patch: patchOperations(n) }) }
  }
  await scenario(
    "patch",
    `PATCH /knowledgebases/:id/pages/:pageId with ${options.patchOperations} operations, a fresh page each, ` +
      `${options.patchConnections} connections, ${options.patchDurationS} s after ${options.patchWarmup} requests`,
    { next: patchRequest, connections: options.patchConnections, amount: options.patchWarmup },
    { next: patchRequest, connections: options.patchConnections, durationS: options.patchDurationS }
  )
  const patchesSent = patchAt
  const patchWrapped = patchesSent > patchOrder.length

  // What the patches did: one applied revision 2 per patched page, nothing lost.
  const check = (() => {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true })
    try {
      const revisions = db
        .prepare("SELECT count(*) AS n FROM page_revisions WHERE knowledgebase_id = ? AND kind = 'edit' AND status = 'applied'")
        .get(knowledgebaseId) as { n: number }
      const stillDraft = db
        .prepare("SELECT count(*) AS n FROM pages WHERE knowledgebase_id = ? AND revision > 1 AND markdown NOT LIKE '%reviewed in edit%'")
        .get(knowledgebaseId) as { n: number }
      return { editRevisions: revisions.n, patchedWithoutEdit: stillDraft.n }
    } finally {
      db.close()
    }
  })()
  const patchRun = runs.find((r) => r.scenario === "patch")!
  const patch2xx =
    (patchRun.warmup.statusCounts["200"] ?? 0) + (patchRun.result.statusCounts["200"] ?? 0) + 1 /* the probe */
  const inFlightAtEnd = patchesSent - patchRun.warmup.requests - patchRun.result.requests
  const everyPatchApplied = check.editRevisions === patchesSent + 1 && check.patchedWithoutEdit === 0
  console.log(
    `patches: ${patchesSent} sent (${inFlightAtEnd} still in flight when the run stopped), ${patch2xx} answered 200 incl. the probe; ` +
      `${check.editRevisions} applied edit revisions in the database: ` +
      (everyPatchApplied ? "every patch sent was applied" : `MISMATCH (expected ${patchesSent + 1}, ${check.patchedWithoutEdit} edited pages without the patch)`) +
      (patchWrapped ? " (more patches than pages: some pages were patched twice)" : "")
  )

  // 4. the listing right after a write: the cached tree is dropped at every commit and read again
  const afterWrite: Array<number> = []
  for (let i = 0; i < options.listingsAfterWrite; i++) {
    const page = readOrder[(readOrder.length - 1 - i) % readOrder.length]!
    const write = await api("PATCH", `${kbBase}/pages/${page}`, { description: `Touched by the benchmark (${i}).` })
    if (write.status !== 200) throw new Error(`PATCH description: ${write.status} ${write.text.slice(0, 300)}`)
    const t0 = performance.now()
    const listed = await api("GET", treePath)
    afterWrite.push(performance.now() - t0)
    if (listed.status !== 200) throw new Error(`GET ${treePath} after a write: ${listed.status}`)
  }
  const cachedAgain: Array<number> = []
  for (let i = 0; i < options.listingsAfterWrite; i++) {
    const t0 = performance.now()
    await api("GET", treePath)
    cachedAgain.push(performance.now() - t0)
  }
  const listingAfterWrite = {
    medianMs: Number(median(afterWrite).toFixed(2)),
    maxMs: Number(Math.max(...afterWrite).toFixed(2)),
    cachedMedianMs: Number(median(cachedAgain).toFixed(2))
  }
  console.log(
    `tree listing right after a write (sequential, ${options.listingsAfterWrite}×): median ${listingAfterWrite.medianMs} ms, ` +
      `max ${listingAfterWrite.maxMs} ms; unchanged tree: median ${listingAfterWrite.cachedMedianMs} ms`
  )

  const memory = {
    peakRssMb: Number(((procStatusKb(pid, "VmHWM") ?? 0) / 1024).toFixed(1)),
    rssMb: Number(((procStatusKb(pid, "VmRSS") ?? 0) / 1024).toFixed(1))
  }

  // ---- report ----
  const rows = runs.map(({ scenario: s, caches, result: r }) => [
    runLabel(s, caches),
    String(r.connections),
    String(r.requests),
    ...loadCells(r)
  ])
  console.log("")
  console.log(
    table(
      ["scenario", "conns", "requests", ...loadColumns],
      rows
    )
  )
  console.log(
    `\npeak RSS (VmHWM) of the svc server: ${memory.peakRssMb} MB` +
      `\nwarm-ups: ${runs.map((r) => `${runLabel(r.scenario, r.caches)} ${r.warmup.requests} requests, ${r.warmup.non2xx} non-2xx, ${r.warmup.errors} errors`).join("; ")}` +
      `\np99 >1s = p99 of the requests sent 1 s or more into the run; CPU us/req = server CPU time per response;` +
      `\nsrv/gen/other CPU = cores kept busy by the server, the load generator and everything else (noise)`
  )
  const unexpected = runs.filter((r) => r.result.non2xx + r.result.errors + r.warmup.non2xx + r.warmup.errors > 0)
  const noisiest = Math.max(...runs.map((r) => r.result.otherCpuUtilization ?? 0))
  const noisy = noisiest > 0.25
  if (noisy) {
    console.log(
      `\nWARNING: other processes kept up to ${noisiest.toFixed(2)} cores busy during the runs; ` +
        "throughput and latency are not reliable (CPU us/req is the steadier figure). Re-run on a quiet machine or with --wait-quiet 30."
    )
  }
  console.log(
    unexpected.length === 0
      ? "\nno error responses: every request of every run (warm-ups included) answered 2xx"
      : `\nERROR RESPONSES in: ${unexpected.map((r) => runLabel(r.scenario, r.caches)).join(", ")}`
  )

  await cleanup()

  const report = {
    date: new Date(started).toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: plan.json("server", "loadGenerator"),
    options,
    seed: {
      folders: seed.folders,
      pages: seed.pages.length,
      maxDepth: seed.maxDepth,
      pageBytes: seed.pageBytes,
      pagesWithLinks: seed.pagesWithLinks,
      linkRows: seed.linkRows,
      seconds: seed.seconds,
      databaseBytes: seed.databaseBytes,
      topLevelPageCount: topPageCount
    },
    probe: { treeBodyBytes: tree.text.length, firstTreeMs: Number(coldTreeMs.toFixed(2)), secondTreeMs: Number(warmTreeMs.toFixed(2)), pageBodyBytes: readProbe.text.length },
    readsSent,
    patches: { sent: patchesSent, inFlightAtEnd, wrapped: patchWrapped, answered200: patch2xx, everyPatchApplied, ...check },
    listingAfterWrite,
    memory,
    noisy,
    runs,
    wallSeconds: Number(((Date.now() - started) / 1000).toFixed(1))
  }
  const out = join(resultsDir, "pages-latest.json")
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`\nresults: ${out} (${report.wallSeconds} s)`)
  return unexpected.length === 0 ? 0 : 1
}

runBenchmark(main, children, cleanup)
