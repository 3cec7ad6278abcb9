/**
 * The PostgreSQL form of `PRAGMA data_version`: a counter that changes after this instance commits
 * a write and whenever any other instance or process (another `svc serve`, the CLI) commits one.
 *
 * - Own writes: every pooled connection's statements are watched; a statement that is not a read
 *   (anything but `SELECT`/`BEGIN`/`SHOW`, so `COMMIT` included) bumps the counter when it completes,
 *   before the request that made it can answer.
 * - Other writers: a statement-level trigger on every table calls `pg_notify` on one channel (one
 *   notification per transaction, PostgreSQL folds duplicates), delivered at commit to a dedicated
 *   listening connection that bumps the counter.
 * - Before each request (`syncDataVersion`, run by the HTTP server): the cluster's transaction
 *   snapshot (`pg_current_snapshot()`), which changes whenever a transaction that wrote commits
 *   (it leaves the in-progress list, or the horizon moves past it). A notification can arrive a
 *   moment after a commit's acknowledgement; this reading cannot, so a key revoked through any
 *   instance fails on the very next request to every other. It also moves for writes to other
 *   databases of the cluster, which only costs cache misses.
 * - While the listening connection is down, every reading is new, so nothing cached is served.
 */
import { Effect, type Scope } from "effect"
import pg from "pg"

/** The notification channel of committed writes. */
export const dataChangedChannel = "svc_data_changed"

/** Statements that never change data. */
const readOnlyStatement = /^\s*(SELECT|BEGIN|SHOW|LISTEN|UNLISTEN|SET)\b/i

const statementText = (first: unknown): string | undefined =>
  typeof first === "string" ? first : typeof (first as { text?: unknown } | null)?.text === "string" ? (first as { text: string }).text : undefined

/** The counter and the hooks that move it. */
export interface DataVersionTracker {
  readonly dataVersion: () => number
  /** Moves the counter if the cluster's transaction snapshot changed since the last call. */
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
      ;(client as { query: unknown }).query = (...args: Array<unknown>) => {
        const text = statementText(args[0])
        if (text === undefined || readOnlyStatement.test(text)) return query(...args)
        const last = args.length - 1
        const callback = args[last]
        if (typeof callback === "function") {
          args[last] = (...results: Array<unknown>) => {
            bump()
            return (callback as (...a: Array<unknown>) => unknown)(...results)
          }
          return query(...args)
        }
        const result = query(...args)
        if (result instanceof Promise) return result.finally(bump)
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
    let snapshot = ""
    const sync = Effect.promise(() =>
      pool.query({ name: "svc_snapshot", text: "SELECT pg_current_snapshot()::text AS s" }).then(
        (result) => {
          const current = String(result.rows[0]?.s ?? "")
          if (current !== snapshot) {
            snapshot = current
            bump()
          }
        },
        () => bump()
      )
    )
    return {
      dataVersion: () => (listening ? version : ++version),
      sync,
      watch
    }
  })
