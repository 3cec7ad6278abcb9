/**
 * Test harness: a real server on an ephemeral port over a temp SQLite file (or, with
 * `SVC_TEST_BACKEND=pg`, its own PostgreSQL database cloned from the migrated template), a
 * hand-driven clock, admin access to the same database, and a small HTTP helper over real sockets.
 * `SVC_TEST_LOG=1` prints the servers' error logs; `SVC_RECORD_RESPONSES=<dir>` records every answer
 * `request` receives (response-recorder.ts).
 */
import { Effect, LogLevel } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type AdminServices, openAdmin } from "../../server/admin.js"
import type { Role } from "../../server/identity/domain.js"
import { AccountsService, type KeyRequest } from "../../server/identity/service.js"
import { type RunningServer, type ServerOptions, startServer } from "../../server/server.js"
import { createTestDatabase, testBackend } from "./postgres.js"
import { recordResponse } from "./response-recorder.js"

/** The PostgreSQL database of each data directory a test server ran on (a restart finds it again). */
const databases = new Map<string, { readonly url: string; readonly drop: () => Promise<void> }>()

/**
 * The database URL for a server on `dataDir`: undefined on SQLite (the data directory's file), else
 * the data directory's own PostgreSQL database, created on first use.
 */
export const testDatabaseFor = async (dataDir: string): Promise<string | undefined> => {
  if (testBackend() !== "pg") return undefined
  let database = databases.get(dataDir)
  if (database === undefined) {
    database = await createTestDatabase()
    databases.set(dataDir, database)
  }
  return database.url
}

/** The PostgreSQL database a test server on `dataDir` runs on (for the CLI's `SVC_DATABASE_URL`), if any. */
export const knownTestDatabase = (dataDir: string): string | undefined => databases.get(dataDir)?.url

/**
 * The environment a `svc` command on `dataDir` needs beside `SVC_DATA_DIR` to reach the test's data:
 * `SVC_DATABASE_URL` when a test server ran it on PostgreSQL, else nothing.
 */
export const testDatabaseEnv = (dataDir: string): Readonly<Record<string, string>> => {
  const url = knownTestDatabase(dataDir)
  return url === undefined ? {} : { SVC_DATABASE_URL: url }
}

/** Drops the PostgreSQL database of `dataDir`, if it has one. */
export const dropTestDatabase = async (dataDir: string): Promise<void> => {
  const database = databases.get(dataDir)
  databases.delete(dataDir)
  await database?.drop()
}

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public ms = Date.parse("2026-11-21T12:00:00.000Z")) {}
  readonly now = () => this.ms
  advance(ms: number) {
    this.ms += ms
  }
}

/** A response as tests look at it. */
export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

/** A running test server and its tools. */
export interface TestServer extends RunningServer {
  readonly clock: ManualClock
  /** The all-scopes organization key of `default`. */
  readonly key: string
  /** Runs an admin effect on the server's data directory. */
  readonly admin: <A, E>(effect: Effect.Effect<A, E, AdminServices>) => Promise<A>
  /** Sends a request over HTTP; `body` objects are sent as JSON, strings as they are. */
  readonly request: (
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }
  ) => Promise<TestResponse>
  /** Creates an organization key (or a personal key) and returns its secret. */
  readonly createKey: (request: KeyRequest & { org?: string }) => Promise<string>
  /** Creates an organization with an admin-made all-scopes key. */
  readonly createOrganization: (slug: string, plan?: "trial" | "creator" | "pro" | "agency" | "lifetime") => Promise<string>
  readonly addMember: (email: string, role: Role, org?: string) => Promise<void>
  readonly stop: () => Promise<void>
}

/** Starts a server on a fresh data directory. */
export const startTestServer = async (
  options: {
    clock?: ManualClock
    /** Reuses a data directory (a restart); `stop` then leaves it in place. */
    dataDir?: string
    /** The all-scopes key to use when the data directory was bootstrapped by an earlier start. */
    key?: string
    /** More server options (ingestion settings, private URLs, no worker). */
    server?: Partial<Omit<ServerOptions, "dataDir" | "port" | "now">>
  } = {}
): Promise<TestServer> => {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "svc-test-"))
  const clock = options.clock ?? new ManualClock()
  const database = options.server?.database ?? (await testDatabaseFor(dataDir))
  const server = await startServer({ logLevel: process.env.SVC_TEST_LOG ? LogLevel.Error : LogLevel.None, ...options.server, dataDir, database, port: 0, now: clock.now })
  const bootstrapKey = server.bootstrapKey ?? options.key ?? null
  const admin = openAdmin({ dataDir, database })
  const run = admin.run
  const request: TestServer["request"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers }
    const key = opts.key === undefined ? bootstrapKey : opts.key
    if (key !== null) headers.authorization ??= `Bearer ${key}`
    let body: string | undefined
    if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body)
      headers["content-type"] ??= "application/json"
    }
    const url = new URL(`${server.baseUrl}${path}`)
    const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) })
    const text = await response.text()
    recordResponse(url, method, response.status, response.headers, text)
    let parsed: unknown = undefined
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    return { status: response.status, headers: response.headers, body: parsed, text }
  }
  return {
    ...server,
    clock,
    key: bootstrapKey!,
    admin: run,
    request,
    createKey: async ({ org = "default", ...rest }) =>
      (await run(Effect.flatMap(AccountsService, (a) => a.createKey(org, rest)))).secret,
    createOrganization: async (slug, plan = "pro") => {
      await run(Effect.flatMap(AccountsService, (a) => a.createOrganization({ slug, plan })))
      return (await run(Effect.flatMap(AccountsService, (a) => a.createKey(slug, { name: "test", scopes: "all" }))))
        .secret
    },
    addMember: async (email, role, org = "default") => {
      await run(Effect.flatMap(AccountsService, (a) => a.addMember(org, email, role)))
    },
    stop: async () => {
      await admin.close()
      await server.close()
      if (options.dataDir === undefined) {
        rmSync(dataDir, { recursive: true, force: true })
        await dropTestDatabase(dataDir)
      }
    }
  }
}
