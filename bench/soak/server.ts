/**
 * The suite's server processes: started on a data directory (and a database URL when given),
 * killed with SIGKILL or stopped cleanly, and asked to switch an organization's review gate.
 */
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { askChild, type Child, spawnChild } from "../children.js"
import type { SoakReady } from "./protocol.js"

/** Where and on what the servers of one part run. */
export interface Backend {
  readonly dataDir: string
  /** `postgres://…` when the suite runs on PostgreSQL; undefined for SQLite in `dataDir`. */
  readonly database: string | undefined
  /** Receives the servers' stderr. */
  readonly logFile: string
}

/** Starts a server process on `backend` (on `port`, else any free one) and waits for its ready line. */
export const startSoakServer = (backend: Backend, options: { readonly port?: number; readonly requestsPerMinute?: number } = {}): Promise<Child<SoakReady>> =>
  spawnChild<SoakReady>({
    name: "svc",
    script: join(dirname(fileURLToPath(import.meta.url)), "launcher.js"),
    args: [
      "--data-dir",
      backend.dataDir,
      ...(backend.database ? ["--database", backend.database] : []),
      ...(options.port === undefined ? [] : ["--port", String(options.port)]),
      ...(options.requestsPerMinute === undefined ? [] : ["--requests-per-minute", String(options.requestsPerMinute)])
    ],
    logFile: backend.logFile,
    readyTimeoutMs: 60_000
  })

/** Kills the process with SIGKILL (no clean-up of any kind) and resolves once it is gone. */
export const killHard = (child: Child<SoakReady>): Promise<void> =>
  new Promise((resolve) => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return resolve()
    child.process.once("exit", () => resolve())
    child.process.kill("SIGKILL")
  })

/** Switches the review gate of organization `slug` in the server process. */
export const setReview = (child: Child<SoakReady>, slug: string, on: boolean): Promise<void> => {
  const want = on ? "on" : "off"
  return askChild(
    child,
    `review ${want} ${slug}`,
    (line) => {
      const review = (line as { review?: string } | null)?.review
      if (review === want) return true
      return review === "failed" ? new Error(`review ${want} ${slug} failed`) : undefined
    },
    10_000,
    `review ${want} ${slug}: no answer`
  )
}
