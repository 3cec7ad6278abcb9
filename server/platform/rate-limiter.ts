/**
 * Sliding-window rate limits per key: a log of the last N request times per bucket, so the window is
 * exact (no fixed-window bursts) and memory is bounded by the limit. On PostgreSQL the log is a
 * row per bucket of an unlogged table shared by every instance, one statement a take
 * (`pg-rate-limiter.ts`), so a key's limit holds across them.
 */
import { Context, Effect, Schedule } from "effect"
import { AppClock } from "./clock.js"
import { RateLimited } from "./errors.js"
import { pgSweep, pgTake } from "./pg-rate-limiter.js"
import { DatabaseBackend } from "./sql/dialect.js"

/** A named limit: `limit` requests per `windowMs`. */
export interface RateLimit {
  readonly name: string
  readonly limit: number
  readonly windowMs: number
}

/** 120 requests per minute per key (spec: Limits). */
export const requestRate: RateLimit = { name: "requests", limit: 120, windowMs: 60_000 }
/** The per-key request rate in force: the spec's by default; benchmarks raise it to measure throughput. */
export class RequestRate extends Context.Reference<RequestRate>()("svc/RequestRate", {
  defaultValue: (): RateLimit => requestRate
}) {}

/** 3 exports per minute per key (spec: Limits). */
export const exportRate: RateLimit = { name: "exports", limit: 3, windowMs: 60_000 }

/** In-memory sliding-window limiter, one log per (limit, key). */
export class RateLimiter extends Effect.Service<RateLimiter>()("svc/RateLimiter", {
  scoped: Effect.gen(function* () {
    const clock = yield* AppClock
    const backend = yield* DatabaseBackend
    const shared = backend.dialect === "pg" ? pgTake(backend.pool) : null
    if (backend.dialect === "pg") {
      // Idle buckets go once a minute, never in a request (`pg-rate-limiter.ts`).
      const sweep = pgSweep(backend.pool)
      yield* Effect.forkScoped(Effect.repeat(Effect.suspend(() => sweep(clock.now())), Schedule.spaced("1 minute")).pipe(Effect.delay("1 minute")))
    }
    const logs = new Map<string, Array<number>>()
    let checks = 0

    const sweep = (now: number) => {
      for (const [bucket, log] of logs) {
        const last = log[log.length - 1]
        if (last === undefined || now - last >= 60 * 60_000) logs.delete(bucket)
      }
    }

    /** Counts one request against `rate` for `subject`; the refusal when it is over the limit. */
    const tryTake = (rate: RateLimit, subject: string): RateLimited | null => {
      const now = clock.now()
      if (++checks % 10_000 === 0) sweep(now)
      const bucket = `${rate.name}:${subject}`
      let log = logs.get(bucket)
      if (!log) {
        log = []
        logs.set(bucket, log)
      }
      while (log.length > 0 && now - log[0]! >= rate.windowMs) log.shift()
      if (log.length >= rate.limit) {
        const retryAfterSeconds = Math.max(1, Math.ceil((log[0]! + rate.windowMs - now) / 1000))
        return new RateLimited({
          message: `Over ${rate.limit} ${rate.name} per ${rate.windowMs / 1000} seconds for this key; retry in ${retryAfterSeconds} s.`,
          retryAfterSeconds
        })
      }
      log.push(now)
      return null
    }

    return {
      /** Counts one request against `rate` for `subject`, or fails with `rate_limited` and `Retry-After`. */
      take: (rate: RateLimit, subject: string): Effect.Effect<void, RateLimited> =>
        shared !== null
          ? Effect.suspend(() => shared(rate, subject, clock.now()))
          : Effect.suspend(() => {
              const refusal = tryTake(rate, subject)
              return refusal ? Effect.fail(refusal) : Effect.void
            })
    }
  })
}) {}
