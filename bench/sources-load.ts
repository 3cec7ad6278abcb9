/**
 * Load for the sources benchmark (bench/sources.ts):
 *
 * - {@link runSearchLoad}: autocannon with a search body built per request (the next query of a
 *   rotating list), measured like bench/load.ts (every response time kept below the millisecond,
 *   the server's and this process's CPU sampled around the run);
 * - {@link runSequential}: one request at a time on one keep-alive connection (undici), for the
 *   latency of a search on an otherwise idle server.
 */
import autocannon from "autocannon"
import { Client } from "undici"
import { procCpuMs } from "./children.js"
import { type Latency, type LoadResult, measureLoad } from "./load.js"

/** The part of autocannon's per-request options used here (not in bench/autocannon.d.ts). */
interface RequestParams {
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Buffer
}
interface DynamicRequest {
  readonly setupRequest: (request: RequestParams, context: unknown) => RequestParams
  readonly onResponse: (status: number, body: string | Buffer | undefined) => void
}

export interface SearchLoadSpec {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** `/api/v1/knowledgebases/<id>/search` */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** Called once per request: the JSON body to send. */
  readonly next: () => string
  readonly connections: number
  readonly durationS: number
}

export interface SearchLoadResult extends LoadResult {
  readonly failures: ReadonlyArray<{ readonly status: number; readonly body: string }>
}

/** `spec.connections` connections searching for `spec.durationS` seconds against the server `serverPid`. */
export const runSearchLoad = async (spec: SearchLoadSpec, serverPid: number): Promise<SearchLoadResult> => {
  const failures: Array<{ status: number; body: string }> = []
  const request: DynamicRequest = {
    // a fresh headers object: autocannon writes Content-Length into it
    setupRequest: (params) => ({ ...params, method: "POST", path: spec.path, headers: { ...spec.headers }, body: spec.next() }),
    onResponse: (status, body) => {
      if ((status < 200 || status > 299) && failures.length < 5) failures.push({ status, body: String(body ?? "").slice(0, 400) })
    }
  }
  const options: autocannon.Options & { readonly requests: ReadonlyArray<DynamicRequest> } = {
    url: spec.origin,
    headers: spec.headers,
    connections: spec.connections,
    duration: spec.durationS,
    requests: [request],
    timeout: 10
  }
  return { ...(await measureLoad(options, spec.connections, serverPid)), failures }
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
const round = (value: number, digits = 3) => Number(value.toFixed(digits))

/** Latency figures of a list of times (ms). */
export const latencyOf = (times: ReadonlyArray<number>): Latency => {
  const sorted = [...times].sort((a, b) => a - b)
  return {
    mean: round(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(percentile(sorted, 100))
  }
}

export interface SequentialSpec {
  readonly client: Client
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** The JSON bodies to send, in turn (cycled). */
  readonly bodies: ReadonlyArray<string>
  readonly warmup: number
  readonly requests: number
  /** Stop measuring after this long even if fewer requests were sent. */
  readonly maxSeconds: number
}

export interface SequentialResult {
  readonly requests: number
  readonly seconds: number
  readonly latencyMs: Latency
  /** Server CPU time per request (µs; null off Linux). */
  readonly serverCpuUsPerRequest: number | null
  readonly non2xx: number
  readonly statusCounts: Readonly<Record<string, number>>
  readonly failures: ReadonlyArray<{ readonly status: number; readonly body: string }>
  /** Mean number of results per answer, and of answers with none. */
  readonly meanResults: number
  readonly emptyAnswers: number
  /** Mean response body size (bytes). */
  readonly meanBodyBytes: number
  /** The slowest requests: body and time (ms). */
  readonly slowest: ReadonlyArray<{ readonly body: string; readonly ms: number }>
}

/** Sends `spec.bodies` one at a time (after `spec.warmup` unmeasured ones), timing each. */
export const runSequential = async (spec: SequentialSpec, serverPid: number): Promise<SequentialResult> => {
  let at = 0
  const send = async () => {
    const body = spec.bodies[at++ % spec.bodies.length]!
    const started = performance.now()
    const response = await spec.client.request({ method: "POST", path: spec.path, headers: spec.headers, body })
    const text = await response.body.text()
    return { body, ms: performance.now() - started, status: response.statusCode, text }
  }
  for (let i = 0; i < spec.warmup; i++) await send()
  const times: Array<number> = []
  const statusCounts: Record<string, number> = {}
  const failures: Array<{ status: number; body: string }> = []
  const timed: Array<{ body: string; ms: number }> = []
  let results = 0
  let empty = 0
  let bytes = 0
  const cpuBefore = procCpuMs(serverPid)
  const started = performance.now()
  while (times.length < spec.requests && performance.now() - started < spec.maxSeconds * 1000) {
    const r = await send()
    times.push(r.ms)
    timed.push({ body: r.body, ms: r.ms })
    statusCounts[r.status] = (statusCounts[r.status] ?? 0) + 1
    bytes += r.text.length
    if (r.status < 200 || r.status > 299) {
      if (failures.length < 5) failures.push({ status: r.status, body: r.text.slice(0, 400) })
      continue
    }
    const n = (JSON.parse(r.text) as { results?: Array<unknown> }).results?.length ?? 0
    results += n
    if (n === 0) empty++
  }
  const seconds = (performance.now() - started) / 1000
  const cpuAfter = procCpuMs(serverPid)
  const ok = times.length - failures.length
  return {
    requests: times.length,
    seconds: round(seconds),
    latencyMs: latencyOf(times),
    serverCpuUsPerRequest: cpuBefore === null || cpuAfter === null ? null : round(((cpuAfter - cpuBefore) * 1000) / times.length, 0),
    non2xx: Object.entries(statusCounts).filter(([s]) => !s.startsWith("2")).reduce((sum, [, n]) => sum + n, 0),
    statusCounts,
    failures,
    meanResults: round(results / Math.max(1, ok), 1),
    emptyAnswers: empty,
    meanBodyBytes: Math.round(bytes / Math.max(1, times.length)),
    slowest: timed.sort((a, b) => b.ms - a.ms).slice(0, 3).map((t) => ({ body: t.body, ms: round(t.ms, 2) }))
  }
}
