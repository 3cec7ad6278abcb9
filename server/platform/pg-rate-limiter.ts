/**
 * The rate limiter's PostgreSQL form, shared by every instance on the database: one row per bucket
 * in the UNLOGGED table `rate_limit_buckets` (created with the database, `pg-database.ts`), holding
 * the times of the requests it counted within the window (`times`, with how many at each in
 * `counts`), so the window slides exactly as the in-memory log's does (`countedAt`: above 1,000 a
 * window, in steps).
 *
 * A take is one statement, outside any transaction: an upsert of the bucket whose `DO UPDATE`
 * adds the time only `WHERE` fewer than `limit` requests are still in the window. At READ COMMITTED
 * `ON CONFLICT DO UPDATE` locks the bucket's row and evaluates its `WHERE` on the newest committed
 * version of it, so concurrent takes through any instances queue on that one row lock and each
 * sees the times the previous ones added: exactly `limit` pass. No advisory lock, no `BEGIN`/
 * `COMMIT` round trips, and an unlogged table's commit waits for no WAL flush. A refusal reads the
 * bucket once more for `Retry-After` (only refusals pay it).
 *
 * Its statements are named (`rateLimitStatement`): the data version (`pg-data-version.ts`) lets
 * them by, since counting a request changes no data a cache holds. Buckets idle for an hour are
 * deleted by a sweep once a minute (`pgSweep`), never by a request.
 */
import { Effect } from "effect"
import type pg from "pg"
import { RateLimited } from "./errors.js"

/** A limit as the limiter counts it. */
interface Rate {
  readonly name: string
  readonly limit: number
  readonly windowMs: number
}

/** The prefix of the names of this module's statements: not data changes (`pg-data-version.ts`). */
export const rateLimitStatement = "svc_rate_"

/** A counted time still in the window (parameters: $1 bucket, $2 now, $3 window, $4 limit, $5 the time counted). */
const inWindow = "t > $2::bigint - $3::bigint"

const takeStatement = {
  name: `${rateLimitStatement}take`,
  text: `INSERT INTO rate_limit_buckets AS b (bucket, times, counts, last_at) VALUES ($1, ARRAY[$5::bigint], ARRAY[1::bigint], $2::bigint)
    ON CONFLICT (bucket) DO UPDATE
      SET times = ARRAY(SELECT t FROM (SELECT t FROM unnest(b.times) AS x (t) WHERE ${inWindow} UNION SELECT $5::bigint) AS s ORDER BY t),
        counts = ARRAY(SELECT sum(n)::bigint FROM (SELECT t, n FROM unnest(b.times, b.counts) AS x (t, n) WHERE ${inWindow} UNION ALL SELECT $5::bigint, 1) AS s
          GROUP BY t ORDER BY t),
        last_at = $2::bigint
      WHERE (SELECT coalesce(sum(n), 0) FROM unnest(b.times, b.counts) AS x (t, n) WHERE ${inWindow}) < $4::bigint
    RETURNING 1 AS taken`
}

const firstStatement = {
  name: `${rateLimitStatement}first`,
  text: `SELECT min(t) AS first FROM rate_limit_buckets, unnest(times) AS x (t) WHERE bucket = $1 AND ${inWindow}`
}

const sweepStatement = {
  name: `${rateLimitStatement}sweep`,
  text: `DELETE FROM rate_limit_buckets WHERE last_at < $1::bigint`
}

/** Limits up to this many per window count each request at its millisecond: the exact sliding log. */
export const exactUpTo = 1_000

/**
 * The time a request at `now` is counted at: `now` itself for limits up to `exactUpTo`; above,
 * the end of its `windowMs / exactUpTo` step (60 ms for a minute), so a bucket holds at most
 * `exactUpTo` times whatever the rate (a benchmark's raised limit), each request counted as late
 * as its step ends: it leaves the window no earlier than its own time would.
 */
export const countedAt = (rate: Rate, now: number): number => {
  if (rate.limit <= exactUpTo) return now
  const step = Math.max(1, Math.ceil(rate.windowMs / exactUpTo))
  return Math.ceil(now / step) * step
}

/** How long a bucket may stay idle before the sweep deletes it (longer than any window). */
export const idleBucketMs = 60 * 60_000

/** Counts one request against `rate` for `subject` at `now`, or fails with the refusal. */
export const pgTake =
  (pool: pg.Pool) =>
  (rate: Rate, subject: string, now: number): Effect.Effect<void, RateLimited> => {
    const bucket = `${rate.name}:${subject}`
    return Effect.promise(async () => {
      const taken = await pool.query({ ...takeStatement, values: [bucket, now, rate.windowMs, rate.limit, countedAt(rate, now)] })
      if (taken.rowCount === 1) return null
      const first = await pool.query({ ...firstStatement, values: [bucket, now, rate.windowMs] })
      const oldest = Number(first.rows[0]?.first ?? now)
      const retryAfterSeconds = Math.max(1, Math.ceil((oldest + rate.windowMs - now) / 1000))
      return new RateLimited({
        message: `Over ${rate.limit} ${rate.name} per ${rate.windowMs / 1000} seconds for this key; retry in ${retryAfterSeconds} s.`,
        retryAfterSeconds
      })
    }).pipe(Effect.flatMap((refusal) => (refusal === null ? Effect.void : Effect.fail(refusal))))
  }

/** Deletes the buckets idle since before `now - idleBucketMs` (one statement, a minute apart per instance). */
export const pgSweep =
  (pool: pg.Pool) =>
  (now: number): Effect.Effect<void> =>
    Effect.promise(() => pool.query({ ...sweepStatement, values: [now - idleBucketMs] }).then(
      () => undefined,
      () => undefined
    ))
