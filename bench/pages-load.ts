/**
 * One load run with autocannon whose every request is built on the fly (`requests[].setupRequest`):
 * a different page id, method and body per request, chosen by the caller's `next()`. Measured like
 * bench/load.ts (every response time kept below the millisecond, the server's and this process's
 * CPU time sampled around the run) and answering the same `LoadResult`.
 */
import autocannon from "autocannon"
import { type LoadResult, measureLoad } from "./load.js"

/** One request to send. */
export interface NextRequest {
  readonly method: "GET" | "PATCH" | "POST"
  /** Path and query, e.g. `/api/v1/knowledgebases/<id>/pages/<pageId>`. */
  readonly path: string
  readonly body?: string | undefined
  /** Headers of this request besides the spec's (e.g. another key's `Authorization`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
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
  const failures: Array<{ status: number; body: string }> = []

  const request: DynamicRequest = {
    setupRequest: (params) => {
      const next = spec.next()
      // a fresh headers object: autocannon writes Content-Length into it
      const built: RequestParams = { ...params, method: next.method, path: next.path, headers: { ...spec.headers, ...next.headers } }
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

  const options: autocannon.Options & { readonly requests: ReadonlyArray<DynamicRequest> } = {
    url: spec.origin,
    headers: spec.headers,
    connections: spec.amount === undefined ? spec.connections : Math.max(1, Math.min(spec.connections, spec.amount)),
    ...(spec.amount === undefined ? { duration: spec.durationS ?? 10 } : { amount: spec.amount }),
    requests: [request],
    timeout: 10
  }
  return { ...(await measureLoad(options, spec.connections, serverPid)), failures }
}
