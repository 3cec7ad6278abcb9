/**
 * One load run with autocannon, measured precisely: every response time is kept (autocannon's own
 * histogram rounds to whole milliseconds), and the server's CPU time and this process's CPU time
 * are sampled around the run.
 */
import autocannon from "autocannon"
import { machineBusyCpuMs, procCpuMs } from "./children.js"
import { fmt } from "./report.js"

/** What to send. */
export interface LoadSpec {
  readonly url: string
  readonly method: "GET" | "POST"
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | undefined
  readonly connections: number
  /** Seconds; used when `amount` is not given. */
  readonly durationS?: number | undefined
  /** Exactly this many requests. */
  readonly amount?: number | undefined
}

/** Latency figures in milliseconds. */
export interface Latency {
  readonly mean: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
}

/** What one run measured. */
export interface LoadResult {
  readonly connections: number
  /** From the start of the run to its last response, seconds. */
  readonly seconds: number
  /** Responses received. */
  readonly requests: number
  /** Responses per second over the whole run. */
  readonly requestsPerSecond: number
  /** autocannon's mean of its one-second samples (meaningless for runs under ~2 s). */
  readonly autocannonRequestsAverage: number
  /** From every response's time, sub-millisecond. */
  readonly latencyMs: Latency
  /**
   * Only requests sent at least `steadyAfterMs` after the start: without the burst of the first
   * request on every new connection (which a server may serve unfairly).
   */
  readonly steadyLatencyMs: Latency & { readonly requests: number; readonly afterMs: number }
  /** autocannon's own (whole-millisecond) p50/p99 of 2xx responses, for reference. */
  readonly autocannonLatencyMs: { readonly p50: number; readonly p99: number }
  readonly statusCounts: Readonly<Record<string, number>>
  readonly non2xx: number
  /** Connection errors and timeouts. */
  readonly errors: number
  readonly timeouts: number
  /** Server CPU time per response, microseconds (null off Linux). */
  readonly serverCpuUsPerRequest: number | null
  /** Server CPU time / wall time (1 = one core busy). */
  readonly serverCpuUtilization: number | null
  /** This (load generating) process's CPU time / wall time. */
  readonly loadgenCpuUtilization: number
  /**
   * CPU used by everything else on the machine during the run (cores): noise. Near 0 on a quiet
   * machine; the figures of a run with much of it are not comparable.
   */
  readonly otherCpuUtilization: number | null
}

const percentile = (sorted: Float64Array, p: number): number => {
  if (sorted.length === 0) return 0
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index]!
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits))

/** Requests sent this long after the start of a run count as steady state. */
export const steadyAfterMs = 1_000

/** Grows-as-needed list of numbers (response times in ms), summarized by `latency()`. */
export class Samples {
  private values = new Float64Array(1 << 16)
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

/** Runs `spec` against a server whose process is `serverPid`. */
export const runLoad = (spec: LoadSpec, serverPid: number): Promise<LoadResult> =>
  measureLoad(
    {
      url: spec.url,
      method: spec.method,
      headers: spec.headers,
      // autocannon refuses more connections than requests
      connections: spec.amount === undefined ? spec.connections : Math.max(1, Math.min(spec.connections, spec.amount)),
      ...(spec.amount === undefined ? { duration: spec.durationS ?? 10 } : { amount: spec.amount }),
      // (not `idReplacement`: autocannon 8 then sends a wrong Content-Length and the server waits for the rest)
      ...(spec.body === undefined ? {} : { body: spec.body }),
      timeout: 10
    },
    spec.connections,
    serverPid
  )

/**
 * Runs autocannon with `options` against a server whose process is `serverPid`, keeping every
 * response time and sampling the server's, this process's and the machine's CPU around the run.
 */
export const measureLoad = async (options: autocannon.Options, connections: number, serverPid: number): Promise<LoadResult> => {
  const times = new Samples()
  const steadyTimes = new Samples()
  let count = 0
  let lastResponseAt = 0
  const statusCounts: Record<string, number> = {}

  const serverCpuBefore = procCpuMs(serverPid)
  const machineCpuBefore = machineBusyCpuMs()
  const loadgenCpuBefore = process.cpuUsage()
  const startedAt = performance.now()

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
  // autocannon only notices the end at its next one-second tick, so its `duration` overstates the
  // run: time from the start to the last response instead
  const seconds = ((count > 0 ? lastResponseAt : performance.now()) - startedAt) / 1000

  return {
    connections,
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
    otherCpuUtilization: otherCpuMs === null ? null : round(otherCpuMs / wallMs, 2)
  }
}

/** Table headings of a load result's figures, as {@link loadCells} gives them. */
export const loadColumns = ["req/s", "p50 ms", "p99 ms", "max ms", "p99 >1s", "non-2xx", "errors", "CPU us/req", "srv CPU", "gen CPU", "other CPU"]

/** A load result's figures as table cells, in the order of {@link loadColumns}. */
export const loadCells = (r: LoadResult): Array<string> => [
  fmt(r.requestsPerSecond, 0),
  fmt(r.latencyMs.p50, 2),
  fmt(r.latencyMs.p99, 2),
  fmt(r.latencyMs.max, 1),
  r.steadyLatencyMs.requests === 0 ? "-" : fmt(r.steadyLatencyMs.p99, 2),
  String(r.non2xx),
  String(r.errors),
  fmt(r.serverCpuUsPerRequest, 0),
  fmt(r.serverCpuUtilization, 2),
  fmt(r.loadgenCpuUtilization, 2),
  fmt(r.otherCpuUtilization, 2)
]
