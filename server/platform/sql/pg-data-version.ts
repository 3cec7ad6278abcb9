/**
 * The PostgreSQL form of `PRAGMA data_version`: a counter that changes after this instance commits
 * a write and whenever any other instance or process (another `svc serve`, the CLI) commits one,
 * and that counting a request against the shared rate limit never moves (`pg-rate-limiter.ts`).
 *
 * - Own writes: every pooled connection's statements are watched; a statement that is not a read
 *   (anything but `SELECT`/`BEGIN`/`SHOW`/`SET`/savepoints, so `COMMIT` included) bumps the
 *   counter when it completes, before the request that made it can answer. The rate limiter's
 *   statements (named `rateLimitStatement…`) are let by, and so are writes outside a transaction
 *   marked `unversionedMarker` (the instances' heartbeats, to a table no cache reads).
 * - Every instance's commits: the sequence `svc_data_version`, advanced (`nextval`) on the same
 *   connection right after each `COMMIT` of a transaction that wrote (in the same simple query,
 *   `COMMIT; SELECT nextval(…)`: one round trip, the server running `nextval` once the commit is
 *   done) and after each write made outside a transaction (a round trip of its own), before that
 *   `COMMIT` is reported done, so before the request that wrote can answer. Read before each request (`syncDataVersion`, run by the HTTP server, one
 *   `SELECT last_value`, started after the request arrived and shared by every request that
 *   arrived while the one before it was under way): a key revoked through any instance fails on
 *   the very next request to every other. A sequence is not transactional, so advancing it takes no lock a writer could
 *   wait on; advanced only after the commit is visible, a reader that sees the new value also
 *   sees the commit. (`pg_current_snapshot()`, read here before, moved with every rate-limit take,
 *   which commits too: every cache missed on every request.)
 * - Other writers (psql, an older svc, a process that died between its COMMIT and its `nextval`):
 *   a statement-level trigger on every table but the limiter's calls `pg_notify` on one channel
 *   (one notification per transaction, PostgreSQL folds duplicates), delivered at commit to a
 *   dedicated listening connection that bumps the counter, a moment after the commit.
 * - While the listening connection is down, every reading is new, so nothing cached is served.
 */
import { Effect, type Scope } from "effect"
import pg from "pg"
import { rateLimitStatement } from "../pg-rate-limiter.js"
import { laterMarker, unversionedMarker } from "./statement-text.js"

/** The notification channel of committed writes. */
export const dataChangedChannel = "svc_data_changed"

/**
 * Tables no cache reads, written outside transactions by statements marked `unversionedMarker`
 * (an instance's heartbeat): their writes move no data version, and they carry no change trigger.
 */
export const unversionedTables: ReadonlyArray<string> = ["service_instances"]

/** The sequence every instance advances after each of its commits that wrote. */
export const dataVersionSequence = "svc_data_version"

/** Statements that never change data. */
const readOnlyStatement = /^\s*(SELECT|SHOW|LISTEN|UNLISTEN|SET|SAVEPOINT|RELEASE|ROLLBACK\s+TO)\b/i
const beginStatement = /^\s*(BEGIN|START\s+TRANSACTION)\b/i
const commitStatement = /^\s*(COMMIT|END)\b/i
const rollbackStatement = /^\s*(ROLLBACK|ABORT)\b/i
const advanceStatement = { name: "svc_data_version_advance", text: `SELECT nextval('${dataVersionSequence}')` }
/** A COMMIT with the sequence's advance after it, sent as one simple query. */
const commitAndAdvance = `COMMIT; ${advanceStatement.text}`
/** The COMMIT's own result out of {@link commitAndAdvance}'s. */
const commitResult = (result: unknown): unknown => (Array.isArray(result) ? result[0] : result)
const readStatement = { name: "svc_data_version_read", text: `SELECT last_value AS v FROM ${dataVersionSequence}` }

const statementText = (first: unknown): string | undefined =>
  typeof first === "string" ? first : typeof (first as { text?: unknown } | null)?.text === "string" ? (first as { text: string }).text : undefined

const isRateLimitStatement = (first: unknown): boolean => {
  const name = (first as { name?: unknown } | null)?.name
  return typeof name === "string" && name.startsWith(rateLimitStatement)
}

/** The counter and the hooks that move it. */
export interface DataVersionTracker {
  readonly dataVersion: () => number
  /** Moves the counter if any instance committed a write since the last call (the shared sequence moved). */
  readonly sync: Effect.Effect<void>
  /** Watches a pooled client's statements (install on the pool's `connect` event). */
  readonly watch: (client: pg.PoolClient) => void
}

/** A tracker over `pool`, with a listening connection on `dataChangedChannel` for the scope's life. */
export const trackDataVersion = (pool: pg.Pool, options: pg.PoolConfig): Effect.Effect<DataVersionTracker, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    let version = 0
    let listening = false
    const bump = () => {
      version++
    }
    const watch = (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: Array<unknown>) => unknown
      /** Whether a transaction is open on this connection, and whether it wrote. */
      let inTransaction = false
      let wrote = false
      /** Advances the shared sequence on this connection, then goes on (`nextval` failing changes nothing but a miss). */
      const advance = (then: () => unknown) => query(advanceStatement, () => then())
      ;(client as { query: unknown }).query = (...args: Array<unknown>) => {
        // A statement marked to ride on the next one is classified by what it is (`laterMarker`).
        const marked = statementText(args[0])
        const text = marked?.startsWith(laterMarker) ? marked.slice(laterMarker.length) : marked
        if (text === undefined || readOnlyStatement.test(text) || isRateLimitStatement(args[0])) return query(...args)
        // A write to a table no cache reads, outside any transaction (an instance's heartbeat).
        if (!inTransaction && text.startsWith(unversionedMarker)) return query(...args)
        if (beginStatement.test(text)) {
          inTransaction = true
          wrote = false
          return query(...args)
        }
        if (rollbackStatement.test(text)) {
          inTransaction = false
          wrote = false
          return query(...args)
        }
        // A write, or the COMMIT of a transaction: advanced after it when it made a write visible.
        const committing = commitStatement.test(text)
        const advances = committing ? wrote : !inTransaction
        if (committing) {
          // A transaction that only read changes nothing.
          if (!wrote) {
            inTransaction = false
            return query(...args)
          }
          inTransaction = false
          wrote = false
        } else if (inTransaction) {
          wrote = true
        }
        const last = args.length - 1
        const callback = args[last]
        if (committing && advances && typeof args[0] === "string" && !(Array.isArray(args[1]) && args[1].length > 0)) {
          // The COMMIT and the sequence's advance in one simple query (one round trip): the server
          // runs `nextval` once the COMMIT is done, so the version never moves before the data it versions.
          args[0] = commitAndAdvance
          if (typeof callback === "function") {
            args[last] = (error: unknown, result: unknown) => {
              bump()
              return (callback as (...a: Array<unknown>) => unknown)(error, commitResult(result))
            }
            return query(...args)
          }
          return (query(...args) as Promise<unknown>).then(
            (result) => {
              bump()
              return commitResult(result)
            },
            (error) => {
              bump()
              throw error
            }
          )
        }
        if (typeof callback === "function") {
          args[last] = (...results: Array<unknown>) => {
            bump()
            const done = () => (callback as (...a: Array<unknown>) => unknown)(...results)
            return advances && results[0] == null ? advance(done) : done()
          }
          return query(...args)
        }
        const result = query(...args)
        if (result instanceof Promise) {
          return result.then(
            (value) =>
              new Promise((resolve) => {
                bump()
                if (advances) advance(() => resolve(value))
                else resolve(value)
              }),
            (error) => {
              bump()
              throw error
            }
          )
        }
        return result
      }
    }
    pool.on("connect", watch)

    let closed = false
    let listener: pg.Client | undefined
    const connect = async (): Promise<void> => {
      const client = new pg.Client(options)
      client.on("notification", bump)
      client.on("error", () => undefined)
      client.on("end", () => {
        listening = false
        bump()
        if (!closed) setTimeout(() => void connect().catch(() => undefined), 200).unref()
      })
      await client.connect()
      await client.query(`LISTEN ${dataChangedChannel}`)
      listener = client
      bump()
      listening = true
    }
    yield* Effect.acquireRelease(Effect.tryPromise(connect), () =>
      Effect.promise(async () => {
        closed = true
        await listener?.end().catch(() => undefined)
      })
    )
    let seen: string | undefined
    const readOnce = (): Promise<void> =>
      pool.query(readStatement).then(
        (result) => {
          const current = String(result.rows[0]?.v ?? "")
          if (current !== seen) {
            seen = current
            bump()
          }
        },
        () => bump()
      )
    /**
     * Requests share readings: one that arrives while a reading is under way waits for the next,
     * which starts when that one ends, so after it arrived (one started before could miss a commit
     * acknowledged just before the request); every request arriving meanwhile shares that next one.
     * Under load one round trip serves many requests, at the price of up to one more wait.
     */
    let current: Promise<void> | null = null
    let following: Promise<void> | null = null
    const reading = (): Promise<void> => {
      if (current === null) {
        current = readOnce().finally(() => {
          current = null
        })
        return current
      }
      following ??= current.then(() => {
        following = null
        return reading()
      })
      return following
    }
    const sync = Effect.promise(reading)
    return {
      dataVersion: () => (listening ? version : ++version),
      sync,
      watch
    }
  })
