/**
 * PostgreSQL for the test matrix (the `pg` project of vitest.config.ts, `SVC_TEST_BACKEND=pg`): the global setup starts one cluster of
 * Debian's `postgresql` per vitest run (as the `postgres` user when run as root, on a temp directory
 * and a free port), migrates a template database once, and each test server gets its own database
 * cloned from it (`CREATE DATABASE … TEMPLATE`, milliseconds).
 */
import { execFileSync, spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { inject } from "vitest"

/** The backend the suite runs on. */
export const testBackend = (): "sqlite" | "pg" => (process.env.SVC_TEST_BACKEND === "pg" ? "pg" : "sqlite")

const adminUrlVariable = "SVC_TEST_PG_ADMIN_URL"
const templateName = "svc_template"

const binDir = (): string => {
  for (const version of ["17", "16", "15", "14"]) {
    const dir = `/usr/lib/postgresql/${version}/bin`
    if (existsSync(join(dir, "initdb"))) return dir
  }
  throw new Error("PostgreSQL is not installed (apt-get install -y postgresql)")
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

const asPostgres = (command: string, args: ReadonlyArray<string>): void => {
  const isRoot = process.getuid?.() === 0
  const result = isRoot
    ? spawnSync("runuser", ["-u", "postgres", "--", command, ...args], { encoding: "utf8" })
    : spawnSync(command, [...args], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`)
}

/** A running cluster: its superuser URL and how to stop it. */
export interface TestCluster {
  readonly adminUrl: string
  readonly stop: () => void
}

/** Starts a throwaway cluster on a temp directory and a free port. */
export const startCluster = async (): Promise<TestCluster> => {
  const bin = binDir()
  const dir = mkdtempSync(join(tmpdir(), "svc-pg-"))
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, "data")
  const port = await freePort()
  asPostgres(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"])
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
  asPostgres(join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "log"), "-o", settings, "-w", "start"])
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        asPostgres(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"])
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
  const cluster = await startCluster()
  try {
    await withAdmin(cluster.adminUrl, (client) => client.query(`CREATE DATABASE ${templateName}`))
    const { migrateDatabase } = await import("./postgres-migrate.js")
    await migrateDatabase(urlOf(cluster.adminUrl, templateName))
  } catch (error) {
    cluster.stop()
    throw error
  }
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
