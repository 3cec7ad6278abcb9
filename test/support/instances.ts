/**
 * The set-up of the tests of several `svc serve` instances on one PostgreSQL database (pg project
 * only), as behind a load balancer: a fresh database, instances on it sharing one clock and the
 * first one's key, and a client of the test's own on the database.
 */
import pg from "pg"
import { afterAll, beforeAll } from "vitest"
import { createTestDatabase } from "./postgres.js"
import { ManualClock, startTestServer, type TestServer } from "./server.js"

/** The database, its instances and the test's client, once started. */
export interface InstancesOnOneDatabase {
  /** The database all the instances run on. */
  readonly database: { readonly url: string }
  /** The instances in the order started: the first bootstrapped the database, the others use its key. */
  readonly instances: Array<TestServer>
  /** A client of the database, connected, for the test's own queries. */
  readonly db: pg.Client
}

/** How the instances run. */
export interface InstancesOnOneDatabaseOptions {
  /** How many instances (three unless given). */
  readonly count?: number
  /** The clock they share (a new one unless given). */
  readonly clock?: ManualClock
  /** Their request rate per key and minute (the server's default unless given). */
  readonly requestsPerMinute?: number
}

/**
 * Registers the hooks of a file's tests of several instances: before all, a fresh database, the
 * instances on it and a connected client, handed to `ready`; after all, the client closed, the
 * instances stopped one by one and the database dropped.
 */
export const instancesOnOneDatabase = (options: InstancesOnOneDatabaseOptions, ready: (started: InstancesOnOneDatabase) => void): void => {
  let database: { readonly url: string; readonly drop: () => Promise<void> } | undefined
  let instances: Array<TestServer> = []
  let db: pg.Client | undefined
  beforeAll(async () => {
    database = await createTestDatabase()
    const clock = options.clock ?? new ManualClock()
    const server = { database: database.url, ...(options.requestsPerMinute === undefined ? {} : { requestsPerMinute: options.requestsPerMinute }) }
    const first = await startTestServer({ clock, server })
    const others = await Promise.all(Array.from({ length: (options.count ?? 3) - 1 }, () => startTestServer({ clock, key: first.key, server })))
    instances = [first, ...others]
    db = new pg.Client({ connectionString: database.url })
    await db.connect()
    ready({ database, instances, db })
  })
  afterAll(async () => {
    await db?.end()
    for (const instance of instances) await instance.stop()
    await database?.drop()
  })
}
