/**
 * Load part: `connections` workers on as many keep-alive connections (undici Pool) for a fixed
 * time, each looping over a mixed workload: reads (page, Knowledgebase list, Agent), searches, page
 * patches (each worker its own page), uploads and runs of an Agent on the builtin model. Prints
 * throughput, p50/p99 (also of the requests sent after the first second, without the burst of
 * new connections) and errors per operation, and the server's CPU per request.
 */
import type { Child } from "../children.js"
import { procCpuMs } from "../children.js"
import { SoakClient } from "./http.js"
import type { SoakReady } from "./protocol.js"
import { seedOrganization } from "./seed.js"

/** Settings of one load run. */
export interface LoadOptions {
  readonly connections: number
  readonly seconds: number
}

/** Figures of one operation of the mix. */
export interface OperationLoad {
  readonly requests: number
  readonly perSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** p99 of the requests sent after the first `steadyAfterMs` (without the burst of new connections). */
  readonly steadyP99Ms: number
  readonly errors: number
  /** The first error seen, for the report. */
  readonly firstError: string | null
}

/** What the load part measured. */
export interface LoadResult {
  readonly connections: number
  readonly seconds: number
  readonly requests: number
  readonly perSecond: number
  readonly serverCpuUsPerRequest: number | null
  readonly operations: Readonly<Record<string, OperationLoad>>
}

/** Requests sent this long after the start count as steady state (as in bench/load.ts). */
const steadyAfterMs = 1_000

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

/** Runs the load part against a fresh server. */
export const runLoad = async (server: Child<SoakReady>, options: LoadOptions): Promise<LoadResult> => {
  const orgs = server.ready.organizations
  if (!orgs) throw new Error("load needs a fresh server")
  const client = new SoakClient(server.ready.origin, options.connections)
  try {
    const ids = await seedOrganization(client, server, orgs.a)
    const key = orgs.a.orgKey
    const kb = `/knowledgebases/${ids.knowledgebase}`
    const pages: Array<{ id: string; marker: number }> = []
    for (let i = 0; i < options.connections; i++) {
      const body = `# Load page ${i}\n\nRefunds within 30 days; receipts kept for seven years.\n\nmarker: m0\n`
      pages.push({ id: (await client.must(key, "POST", `${kb}/pages`, { title: `Load page ${i}`, bodyMarkdown: body })).page.id, marker: 0 })
    }
    const queries = ["refunds", "receipts seven years", "days", "policy refunds receipts", "kept"]
    type Mix = { name: string; weight: number; request: (worker: number, n: number) => { method: string; path: string; body?: unknown } }
    const mix: Array<Mix> = [
      { name: "read page", weight: 25, request: (w) => ({ method: "GET", path: `${kb}/pages/${pages[w]!.id}` }) },
      { name: "list Knowledgebases", weight: 15, request: () => ({ method: "GET", path: "/knowledgebases?limit=20" }) },
      { name: "read Agent", weight: 10, request: () => ({ method: "GET", path: `/agents/${ids.agent}` }) },
      { name: "search", weight: 15, request: (_, n) => ({ method: "POST", path: `${kb}/search`, body: { query: queries[n % queries.length] } }) },
      {
        name: "patch page",
        weight: 15,
        request: (w) => {
          const page = pages[w]!
          const patch = [{ op: "replace", oldString: `marker: m${page.marker}`, newString: `marker: m${page.marker + 1}` }]
          return { method: "PATCH", path: `${kb}/pages/${page.id}`, body: { patch } }
        }
      },
      { name: "upload", weight: 5, request: (w, n) => ({ method: "POST", path: `${kb}/sources`, body: { name: `Load ${w}-${n}`, contentText: `Upload ${w}-${n}: receipts and refunds, item ${n}.` } }) },
      { name: "run Agent", weight: 15, request: (_, n) => ({ method: "POST", path: `/agents/${ids.agent}/conversation`, body: { message: `refunds ${n}` } }) }
    ]
    const schedule = mix.flatMap((entry) => Array.from({ length: entry.weight }, () => entry))
    const times = new Map<string, Array<number>>(mix.map((entry) => [entry.name, []]))
    const steady = new Map<string, Array<number>>(mix.map((entry) => [entry.name, []]))
    const errors = new Map<string, { count: number; first: string | null }>(mix.map((entry) => [entry.name, { count: 0, first: null }]))
    const cpuBefore = procCpuMs(server.ready.pid)
    const started = performance.now()
    const deadline = started + options.seconds * 1000
    // one connection per worker: a shared pool serves the same load at a third of the rate
    const connections = Array.from({ length: options.connections }, () => new SoakClient(server.ready.origin, 1))
    const worker = async (w: number) => {
      for (let n = w * 7; performance.now() < deadline; n++) {
        const entry = schedule[n % schedule.length]!
        const request = entry.request(w, n)
        const sentAt = performance.now()
        const answer = await connections[w]!.send({ ...request, path: `/api/v1${request.path}`, headers: { authorization: `Bearer ${key}` } })
        times.get(entry.name)!.push(performance.now() - sentAt)
        if (sentAt - started >= steadyAfterMs) steady.get(entry.name)!.push(performance.now() - sentAt)
        if (!answer.ok || answer.status >= 300) {
          const failure = errors.get(entry.name)!
          failure.count++
          failure.first ??= answer.ok ? `${answer.status} ${answer.text.slice(0, 160)}` : answer.error
        } else if (entry.name === "patch page") {
          pages[w]!.marker++
        }
      }
    }
    await Promise.all(Array.from({ length: options.connections }, (_, w) => worker(w)))
    await Promise.all(connections.map((connection) => connection.close()))
    const seconds = (performance.now() - started) / 1000
    const cpuAfter = procCpuMs(server.ready.pid)
    const operations: Record<string, OperationLoad> = {}
    let requests = 0
    for (const entry of mix) {
      const sorted = times.get(entry.name)!.sort((a, b) => a - b)
      requests += sorted.length
      const failure = errors.get(entry.name)!
      operations[entry.name] = {
        requests: sorted.length,
        perSecond: Math.round(sorted.length / seconds),
        p50Ms: Number(percentile(sorted, 50).toFixed(1)),
        p99Ms: Number(percentile(sorted, 99).toFixed(1)),
        steadyP99Ms: Number(percentile(steady.get(entry.name)!.sort((a, b) => a - b), 99).toFixed(1)),
        errors: failure.count,
        firstError: failure.first
      }
    }
    return {
      connections: options.connections,
      seconds: Number(seconds.toFixed(1)),
      requests,
      perSecond: Math.round(requests / seconds),
      serverCpuUsPerRequest: cpuBefore === null || cpuAfter === null ? null : Math.round(((cpuAfter - cpuBefore) * 1000) / requests),
      operations
    }
  } finally {
    await client.close()
  }
}

/** Prints the figures of a load run; answers whether it passed (no errors). */
export const reportLoad = (result: LoadResult): boolean => {
  console.log(
    `load: ${result.connections} connections for ${result.seconds} s: ${result.requests} requests, ${result.perSecond} req/s, ` +
      `server CPU ${result.serverCpuUsPerRequest ?? "?"} us/request`
  )
  console.log(`load: ${"operation".padEnd(20)} ${"requests".padStart(9)} ${"req/s".padStart(6)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"p99 >1s".padStart(8)} ${"errors".padStart(7)}`)
  let errors = 0
  for (const [name, op] of Object.entries(result.operations)) {
    errors += op.errors
    console.log(`load: ${name.padEnd(20)} ${String(op.requests).padStart(9)} ${String(op.perSecond).padStart(6)} ${op.p50Ms.toFixed(1).padStart(8)} ${op.p99Ms.toFixed(1).padStart(8)} ${op.steadyP99Ms.toFixed(1).padStart(8)} ${String(op.errors).padStart(7)}`)
    if (op.firstError) console.log(`      first error: ${op.firstError}`)
  }
  return errors === 0
}
