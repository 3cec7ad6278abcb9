/**
 * One load run with autocannon whose every request is built on the fly (`requests[].setupRequest`):
 * a different page id, method and body per request, chosen by the caller's `next()`. Measured like
 * bench/load.ts (every response time kept below the millisecond, the server's and this process's
 * CPU time sampled around the run) and answering the same `LoadResult`.
 */
import autocannon from "autocannon"
import { machineBusyCpuMs, procCpuMs } from "./children.js"
import { type Latency, type LoadResult, steadyAfterMs } from "./load.js"

/** One request to send. */
export interface NextRequest {
  readonly method: "GET" | "PATCH"
  /** Path and query, e.g. `/api/v1/knowledgebases/<id>/pages/<pageId>`. */
  readonly path: string
  readonly body?: string | undefined
}

/** What to send. */
export interface DynamicLoadSpec {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly headers: Readonly<Record<string, string>>
  /** Called once per request sent (plus at most one per connection that the end of the run cuts off). */
  readonly next: () => NextRequest
  readonly connections: number
  /** Seconds; used when `amount` is not given. */
  readonly durationS?: number | undefined
  /** Exactly this many requests. */
  readonly amount?: number | undefined
}

/** A run's result, with the first few non-2xx answers kept for the report. */
export interface DynamicLoadResult extends LoadResult {
  readonly failures: ReadonlyArray<{ readonly status: number; readonly body: string }>
}

const percentile = (sorted: Float64Array, p: number): number => {
  if (sorted.length === 0) return 0
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index]!
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits))

/** Grows-as-needed list of numbers. */
class Samples {
  private values = new Float64Array(1 << 14)
  length = 0
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.length++] = value
  }
  latency(): Latency {
    const sorted = this.values.slice(0, this.length).sort()
    let sum = 0
    for (const t of sorted) sum += t
    return {
      mean: round(sorted.length === 0 ? 0 : sum / sorted.length, 3),
      p50: round(percentile(sorted, 50), 3),
      p90: round(percentile(sorted, 90), 3),
      p99: round(percentile(sorted, 99), 3),
      max: round(percentile(sorted, 100), 3)
    }
  }
}

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

/** Runs `spec` against a server whose process is `serverPid`. */
export const runDynamicLoad = async (spec: DynamicLoadSpec, serverPid: number): Promise<DynamicLoadResult> => {
  const times = new Samples()
  const steadyTimes = new Samples()
  let count = 0
  let lastResponseAt = 0
  const statusCounts: Record<string, number> = {}
  const failures: Array<{ status: number; body: string }> = []

  const request: DynamicRequest = {
    setupRequest: (params) => {
      const next = spec.next()
      // a fresh headers object: autocannon writes Content-Length into it
      const built: RequestParams = { ...params, method: next.method, path: next.path, headers: { ...spec.headers } }
      if (next.body === undefined) delete built.body
      else built.body = next.body
      return built
    },
    onResponse: (status, body) => {
      if ((status < 200 || status > 299) && failures.length < 5) {
        failures.push({ status, body: String(body ?? "").slice(0, 400) })
      }
    }
  }

  const serverCpuBefore = procCpuMs(serverPid)
  const machineCpuBefore = machineBusyCpuMs()
  const loadgenCpuBefore = process.cpuUsage()
  const startedAt = performance.now()

  const options: autocannon.Options & { readonly requests: ReadonlyArray<DynamicRequest> } = {
    url: spec.origin,
    headers: spec.headers,
    connections: spec.amount === undefined ? spec.connections : Math.max(1, Math.min(spec.connections, spec.amount)),
    ...(spec.amount === undefined ? { duration: spec.durationS ?? 10 } : { amount: spec.amount }),
    requests: [request],
    timeout: 10
  }
  const instance = autocannon(options)
  instance.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    count++
    lastResponseAt = performance.now()
    times.push(responseTime)
    if (lastResponseAt - responseTime - startedAt >= steadyAfterMs) steadyTimes.push(responseTime)
    statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1
  })
  const result = await instance

  const serverCpuAfter = procCpuMs(serverPid)
  const machineCpuAfter = machineBusyCpuMs()
  const loadgenCpu = process.cpuUsage(loadgenCpuBefore)

  const serverCpuMs = serverCpuBefore !== null && serverCpuAfter !== null ? serverCpuAfter - serverCpuBefore : null
  const wallMs = performance.now() - startedAt
  const loadgenCpuMs = (loadgenCpu.user + loadgenCpu.system) / 1000
  const otherCpuMs =
    machineCpuBefore !== null && machineCpuAfter !== null && serverCpuMs !== null
      ? Math.max(0, machineCpuAfter - machineCpuBefore - serverCpuMs - loadgenCpuMs)
      : null
  const seconds = ((count > 0 ? lastResponseAt : performance.now()) - startedAt) / 1000

  return {
    connections: spec.connections,
    seconds: round(seconds, 3),
    requests: count,
    requestsPerSecond: round(count / seconds, 1),
    autocannonRequestsAverage: result.requests.average,
    latencyMs: times.latency(),
    steadyLatencyMs: { ...steadyTimes.latency(), requests: steadyTimes.length, afterMs: steadyAfterMs },
    autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
    statusCounts,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    serverCpuUsPerRequest: serverCpuMs === null || count === 0 ? null : round((serverCpuMs * 1000) / count, 1),
    serverCpuUtilization: serverCpuMs === null ? null : round(serverCpuMs / (seconds * 1000), 2),
    loadgenCpuUtilization: round(loadgenCpuMs / (seconds * 1000), 2),
    otherCpuUtilization: otherCpuMs === null ? null : round(otherCpuMs / wallMs, 2),
    failures
  }
}
