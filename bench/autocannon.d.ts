/**
 * The part of autocannon 8's programmatic API the benchmark uses (the package ships no types).
 * See node_modules/autocannon/README.md.
 */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  namespace autocannon {
    interface Options {
      readonly url: string
      readonly title?: string
      readonly connections?: number
      readonly duration?: number
      /** Stop after this many requests instead of after `duration`. */
      readonly amount?: number
      readonly pipelining?: number
      readonly timeout?: number
      readonly method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
      readonly headers?: Readonly<Record<string, string>>
      readonly body?: string
      /** Replaces `[<id>]` in the body with a unique id per request. */
      readonly idReplacement?: boolean
      readonly workers?: number
      readonly excludeErrorStats?: boolean
    }

    interface Histogram {
      readonly average: number
      readonly mean: number
      readonly stddev: number
      readonly min: number
      readonly max: number
      readonly total?: number
      readonly p50: number
      readonly p90: number
      readonly p99: number
      readonly [percentile: string]: number | undefined
    }

    interface Result {
      readonly title?: string
      readonly url: string
      readonly connections: number
      /** Seconds, to 10 ms. */
      readonly duration: number
      readonly start: Date
      readonly finish: Date
      readonly errors: number
      readonly timeouts: number
      readonly mismatches: number
      readonly non2xx: number
      readonly resets: number
      readonly "1xx": number
      readonly "2xx": number
      readonly "3xx": number
      readonly "4xx": number
      readonly "5xx": number
      readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>
      /** Milliseconds (whole numbers: autocannon's histogram has 1 ms resolution). */
      readonly latency: Histogram
      /** Requests per one-second sample; `total` is every completed request. */
      readonly requests: Histogram & { readonly sent: number }
      readonly throughput: Histogram
    }

    /** A running benchmark: an event emitter that is also a promise of the result. */
    interface Instance extends EventEmitter, PromiseLike<Result> {
      /** `response` handlers get (client, statusCode, resBytes, responseTimeMs). */
      stop(): void
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance

  export default autocannon
}
