/**
 * The rate limiter's PostgreSQL form, shared by every instance on the database: one row per counted
 * request in `rate_limit_hits` (created with the database, `pg-database.ts`), the same sliding
 * window as the in-memory log. Each take runs in its own short transaction holding an advisory lock
 * on its bucket, so concurrent requests through any instances are counted exactly.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { RateLimited } from "./errors.js"
import { declareWrites, writing } from "./sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const rateLimitHitsWrites = declareWrites("rate_limit_hits")

/** A limit as the limiter counts it. */
interface Rate {
  readonly name: string
  readonly limit: number
  readonly windowMs: number
}

/** The advisory-lock class of rate-limit buckets (the second key is the bucket's hash). */
const bucketLockClass = 7_134_003

/** Counts one request against `rate` for `subject` at `now`, or fails with the refusal. */
export const pgTake =
  (sql: SqlClient.SqlClient) =>
  (rate: Rate, subject: string, now: number): Effect.Effect<void, RateLimited> => {
    const bucket = `${rate.name}:${subject}`
    return sql
      .withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(${bucketLockClass}, hashtext(${bucket}))`
          yield* sql`DELETE FROM rate_limit_hits WHERE bucket = ${bucket} AND at <= ${now - rate.windowMs}`.pipe(writing(rateLimitHitsWrites))
          const [row] = yield* sql<{ n: number; first: number | null }>`SELECT count(*) AS n, min(at) AS first FROM rate_limit_hits WHERE bucket = ${bucket}`
          const counted = Number(row?.n ?? 0)
          if (counted >= rate.limit) {
            const retryAfterSeconds = Math.max(1, Math.ceil((Number(row?.first ?? now) + rate.windowMs - now) / 1000))
            return new RateLimited({
              message: `Over ${rate.limit} ${rate.name} per ${rate.windowMs / 1000} seconds for this key; retry in ${retryAfterSeconds} s.`,
              retryAfterSeconds
            })
          }
          yield* sql`INSERT INTO rate_limit_hits (bucket, at) VALUES (${bucket}, ${now})`.pipe(writing(rateLimitHitsWrites))
          return null
        })
      )
      .pipe(
        Effect.orDie,
        Effect.flatMap((refusal) => (refusal === null ? Effect.void : Effect.fail(refusal)))
      )
  }
