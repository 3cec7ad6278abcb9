/**
 * Round trips of writes on PostgreSQL (issue 24), counted on the wire by a proxy in front of the
 * database (test/support/pg-round-trips.ts): `BEGIN` rides on the transaction's first statement,
 * the data version's `nextval` on its `COMMIT`, savepoints on the statement after them or not at
 * all when nothing ran inside them; what the database ends up holding is what it held with every
 * statement sent alone (savepoints rolled back to undo exactly their part); an organization whose
 * transactions lost a race has its next ones start alone for a while. Then a keyed create's
 * and a page PATCH's transactions, statement by statement, through the real server: no savepoint
 * around the idempotency key's look-up and stored answer, writes whose answer nobody reads sent
 * with the statement after them, and the PATCH reads its page once.
 * (pg project only.)
 */
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Exit, type Layer, ManagedRuntime } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ActingOrganization, organizationLockKey } from "../../server/platform/sql/acting-organization.js"
import { DatabaseLive, transactionsOn } from "../../server/platform/sql/database.js"
import { lostRace } from "../../server/platform/sql/pg-serializable.js"
import { declareWrites } from "../../server/platform/sql/write-declaration.js"
import { portableWriteTransactions, type TxBody, txAll, txRun } from "../../server/platform/sql/write-fast-path.js"
import { withClient } from "../../scripts/postgres-cluster.js"
import { organizationId } from "../support/fixtures.js"
import { type RoundTrip, type RoundTripProxy, startRoundTripProxy } from "../support/pg-round-trips.js"
import { createTestDatabase } from "../support/postgres.js"
import { startTestServer, type TestServer } from "../support/server.js"

const firstStatement = (key: number) =>
  `BEGIN; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; SELECT pg_advisory_xact_lock_shared(7134002, ${key})`
const commitAndAdvance = "COMMIT; SELECT nextval('svc_data_version')"

/**
 * A database of its own with `table` created in it, reached through a round-trip proxy, and a
 * runtime of the database layer on that proxy, for the tests of one `describe`.
 */
const proxiedDatabase = (table: string) => {
  let database: { readonly url: string; readonly drop: () => Promise<void> }
  let proxy: RoundTripProxy
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  beforeAll(async () => {
    database = await createTestDatabase()
    await withClient(database.url, (client) => client.query(table))
    proxy = await startRoundTripProxy(database.url)
    runtime = ManagedRuntime.make(DatabaseLive(mkdtempSync(join(tmpdir(), "svc-round-trips-")), proxy.url) as Layer.Layer<SqlClient.SqlClient, unknown>)
    await runtime.runPromise(Effect.void)
  })
  afterAll(async () => {
    await runtime.dispose()
    await proxy.close()
    await database.drop()
  })
  return {
    get url() {
      return database.url
    },
    get proxy() {
      return proxy
    },
    get runtime() {
      return runtime
    }
  }
}

describe("a write transaction on the database layer", () => {
  const db = proxiedDatabase("CREATE TABLE round_trip_rows (id TEXT PRIMARY KEY)")

  /** Runs `effect` and answers the round trips it made. */
  const tripsOf = async <A>(effect: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<{ trips: Array<RoundTrip>; exit: Exit.Exit<A, unknown> }> => {
    const from = db.proxy.roundTrips.length
    const exit = await db.runtime.runPromiseExit(Effect.flatMap(SqlClient.SqlClient, effect))
    return { trips: db.proxy.roundTrips.slice(from), exit }
  }
  const texts = (trips: ReadonlyArray<RoundTrip>) => trips.map((trip) => trip.text)
  const rows = () =>
    withClient(db.url, async (client) => (await client.query<{ id: string }>("SELECT id FROM round_trip_rows ORDER BY id")).rows.map((row) => row.id))
  const dataVersion = () =>
    withClient(db.url, async (client) => Number((await client.query<{ v: string }>("SELECT last_value AS v FROM svc_data_version")).rows[0]!.v))

  it("is two round trips for one write: BEGIN with its isolation, lock and write, then COMMIT with the data version's advance", async () => {
    const version = await dataVersion()
    const { trips, exit } = await tripsOf((sql) => transactionsOn(sql)(sql`INSERT INTO round_trip_rows (id) VALUES (${"one"})`))
    expect(Exit.isSuccess(exit)).toBe(true)
    // The write's parameter is written into the query it shares with BEGIN, the isolation and the lock.
    expect(texts(trips)).toEqual([`${firstStatement(0)}; INSERT INTO round_trip_rows (id) VALUES ('one')`, commitAndAdvance])
    expect(new Set(trips.map((trip) => trip.connection)).size).toBe(1)
    expect(await rows()).toEqual(["one"])
    // Advanced once, after the commit: a reader that sees the new version sees the row.
    expect(await dataVersion()).toBe(version + 1)
  })

  it("commits a transaction that only read without advancing the data version", async () => {
    const version = await dataVersion()
    const { trips, exit } = await tripsOf((sql) => transactionsOn(sql)(sql`SELECT count(*) AS n FROM round_trip_rows`))
    expect(exit).toEqual(Exit.succeed([{ n: 1 }]))
    expect(texts(trips)).toEqual([`${firstStatement(0)}; SELECT count(*) AS n FROM round_trip_rows`, "COMMIT"])
    expect(await dataVersion()).toBe(version)
  })

  it("sends nothing for a transaction that ends before its first statement, committed or rolled back", async () => {
    const committed = await tripsOf((sql) => sql.withTransaction(Effect.succeed("nothing")))
    const rolledBack = await tripsOf((sql) => sql.withTransaction(Effect.fail("refused")))
    expect(committed.exit).toEqual(Exit.succeed("nothing"))
    expect(rolledBack.exit).toEqual(Exit.fail("refused"))
    expect(committed.trips).toEqual([])
    expect(rolledBack.trips).toEqual([])
  })

  it("rolls a savepoint back to exactly where it was set, sending it only when a statement ran inside it", async () => {
    const { trips, exit } = await tripsOf((sql) =>
      transactionsOn(sql)(
        Effect.gen(function* () {
          yield* sql`INSERT INTO round_trip_rows (id) VALUES (${"kept-before"})`
          // Refused before any statement: its savepoint is never sent, nor its rollback.
          const early = yield* Effect.exit(sql.withTransaction(Effect.fail("refused early")))
          // Refused after a write: its savepoint goes before the write, and the write is undone.
          const late = yield* Effect.exit(sql.withTransaction(Effect.zipRight(sql`INSERT INTO round_trip_rows (id) VALUES (${"undone"})`, Effect.fail("refused late"))))
          // Two savepoints in a row before a statement with parameters: one round trip for both.
          yield* sql.withTransaction(sql.withTransaction(sql`INSERT INTO round_trip_rows (id) VALUES (${"kept-nested"})`))
          yield* sql`INSERT INTO round_trip_rows (id) VALUES (${"kept-after"})`
          return [early, late]
        })
      )
    )
    expect(exit).toEqual(Exit.succeed([Exit.fail("refused early"), Exit.fail("refused late")]))
    expect(texts(trips)).toEqual([
      `${firstStatement(0)}; INSERT INTO round_trip_rows (id) VALUES ('kept-before')`,
      // A statement sent with held ones goes in the same simple query, its parameters written in.
      "SAVEPOINT effect_sql_1; INSERT INTO round_trip_rows (id) VALUES ('undone')",
      "ROLLBACK TO SAVEPOINT effect_sql_1",
      "SAVEPOINT effect_sql_1; SAVEPOINT effect_sql_2; INSERT INTO round_trip_rows (id) VALUES ('kept-nested')",
      "INSERT INTO round_trip_rows (id) VALUES ($1)",
      commitAndAdvance
    ])
    expect(await rows()).toEqual(["kept-after", "kept-before", "kept-nested", "one"])
  })

  it("rolls the whole transaction back when it fails, savepoints held or not", async () => {
    const version = await dataVersion()
    const { trips, exit } = await tripsOf((sql) =>
      transactionsOn(sql)(
        Effect.gen(function* () {
          yield* sql`INSERT INTO round_trip_rows (id) VALUES (${"never"})`
          yield* sql.withTransaction(Effect.void)
          return yield* Effect.fail("refused")
        })
      )
    )
    expect(exit).toEqual(Exit.fail("refused"))
    // The savepoint before the end was never sent: the rollback undoes the whole transaction.
    expect(texts(trips)).toEqual([`${firstStatement(0)}; INSERT INTO round_trip_rows (id) VALUES ('never')`, "ROLLBACK"])
    expect(await rows()).not.toContain("never")
    expect(await dataVersion()).toBe(version)
  })
})

describe("writes whose answer nobody reads", () => {
  const db = proxiedDatabase("CREATE TABLE held_rows (id TEXT PRIMARY KEY, note TEXT, n INTEGER)")
  const rowsWrites = declareWrites("held_rows")

  const run = <A>(body: () => TxBody<A>) =>
    db.runtime.runPromiseExit(Effect.flatMap(SqlClient.SqlClient, (sql) => portableWriteTransactions(sql).run(body)))
  const rows = () =>
    withClient(db.url, async (client) => (await client.query<{ id: string; note: string | null; n: number | null }>("SELECT id, note, n FROM held_rows ORDER BY id")).rows)
  /** Connections of the test's database left inside a transaction. */
  const leftInTransaction = () =>
    withClient(db.url, async (client) =>
      Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'")).rows[0]!.n)
    )

  it("go with the next statement, their values written in exactly, and that statement sees them", async () => {
    const tricky = "it's a \\ back'slash; -- not a comment $1 ?"
    const from = db.proxy.roundTrips.length
    const exit = await run(function* () {
      yield* txRun("INSERT INTO held_rows (id, note, n) VALUES (?, ?, ?)", ["a", tricky, 7], rowsWrites)
      yield* txRun("INSERT INTO held_rows (id, note, n) VALUES (?, ?, ?)", ["b", null, -3], rowsWrites)
      return yield* txAll<{ n: number }>("SELECT count(*)::int AS n FROM held_rows WHERE n < ?", [100])
    })
    expect(exit).toEqual(Exit.succeed([{ n: 2 }]))
    const trips = db.proxy.roundTrips.slice(from)
    expect(trips).toHaveLength(2)
    expect(trips[0]!.text.startsWith(`${firstStatement(0)}; INSERT INTO held_rows `)).toBe(true)
    expect(trips[0]!.text).toMatch(/; INSERT INTO held_rows .*; INSERT INTO held_rows .*; SELECT count\(\*\)::int AS n FROM held_rows WHERE n < '100'$/)
    expect(trips[1]!.text).toBe(commitAndAdvance)
    expect(await rows()).toEqual([
      { id: "a", note: tricky, n: 7 },
      { id: "b", note: null, n: -3 }
    ])
  })

  it("fail the statement they went with when they fail: a COMMIT's transaction is rolled back and its connection left clean", async () => {
    const exit = await run(function* () {
      yield* txRun("INSERT INTO held_rows (id, note, n) VALUES (?, ?, ?)", ["c", "kept?", 1], rowsWrites)
      // A duplicate key: fails when it reaches the server, with the COMMIT it rides on.
      yield* txRun("INSERT INTO held_rows (id, note, n) VALUES (?, ?, ?)", ["a", "again", 2], rowsWrites)
    })
    // The duplicate's own failure (a unique violation, tried again as a possible lost race, then let through).
    expect(Exit.isFailure(exit) && lostRace(exit.cause)).toBe("unique")
    expect((await rows()).map((row) => row.id)).toEqual(["a", "b"])
    expect(await leftInTransaction()).toBe(0)
    // Every pooled connection still works.
    const after = await Promise.all(Array.from({ length: 10 }, () => run(function* () {
      return yield* txAll<{ n: number }>("SELECT count(*)::int AS n FROM held_rows", [])
    })))
    expect(after).toEqual(Array.from({ length: 10 }, () => Exit.succeed([{ n: 2 }])))
  })
})

describe("an organization whose write transactions collide", () => {
  const db = proxiedDatabase("CREATE TABLE counted_rows (organization TEXT NOT NULL, n INTEGER NOT NULL)")

  /** Counts the organization's rows and inserts the next, once `ready` is done (when given). */
  const countThenInsert = (sql: SqlClient.SqlClient, organization: string, ready?: Effect.Effect<void>) =>
    Effect.locally(
      transactionsOn(sql)(
        Effect.gen(function* () {
          const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM counted_rows WHERE organization = ${organization}`
          if (ready !== undefined) yield* ready
          yield* sql`INSERT INTO counted_rows (organization, n) VALUES (${organization}, ${row!.n + 1})`
        })
      ),
      ActingOrganization,
      organization
    )

  it("start alone, as re-runs do, for a while after one lost a race; other organizations' still start in parallel", async () => {
    const [keyA, keyB] = [organizationLockKey("org-a"), organizationLockKey("org-b")]
    const from = db.proxy.roundTrips.length
    await db.runtime.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // Both count before either inserts: at SERIALIZABLE one of the two loses and runs again.
        const counted = yield* Deferred.make<void>()
        let reads = 0
        const ready = Effect.suspend(() => (++reads === 2 ? Deferred.succeed(counted, undefined) : Effect.void)).pipe(Effect.zipRight(Deferred.await(counted)))
        yield* Effect.all([countThenInsert(sql, "org-a", ready), countThenInsert(sql, "org-a", ready)], { concurrency: 2 })
      })
    )
    const raced = db.proxy.roundTrips.slice(from).map((trip) => trip.text)
    // The loser's re-run started alone under its organization's lock, at READ COMMITTED.
    expect(raced.filter((text) => text.startsWith(`${firstStatement(keyA)}; `))).toHaveLength(2)
    expect(raced.filter((text) => text.startsWith(`BEGIN; SELECT pg_advisory_xact_lock(7134002, ${keyA}); `))).toHaveLength(1)

    const next = db.proxy.roundTrips.length
    await db.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.zipRight(countThenInsert(sql, "org-a"), countThenInsert(sql, "org-b"))))
    expect(db.proxy.roundTrips.slice(next).map((trip) => trip.text).filter((text) => text.startsWith("BEGIN"))).toEqual([
      `BEGIN; SELECT pg_advisory_xact_lock(7134002, ${keyA}); SELECT count(*)::int AS n FROM counted_rows WHERE organization = 'org-a'`,
      `${firstStatement(keyB)}; SELECT count(*)::int AS n FROM counted_rows WHERE organization = 'org-b'`
    ])
    const counts = await withClient(db.url, async (client) =>
      (await client.query<{ organization: string; n: number }>("SELECT organization, n FROM counted_rows ORDER BY organization, n")).rows
    )
    // Each count saw every insert before it: no number taken twice.
    expect(counts).toEqual([
      { organization: "org-a", n: 1 },
      { organization: "org-a", n: 2 },
      { organization: "org-a", n: 3 },
      { organization: "org-b", n: 1 }
    ])
  })
})

describe("writes through the server", () => {
  let database: { readonly url: string; readonly drop: () => Promise<void> }
  let proxy: RoundTripProxy
  let server: TestServer

  beforeAll(async () => {
    database = await createTestDatabase()
    proxy = await startRoundTripProxy(database.url)
    server = await startTestServer({ server: { database: proxy.url } })
  })
  afterAll(async () => {
    await server.stop()
    await proxy.close()
    await database.drop()
  })

  /** The round trips of the transaction whose statements include `marker`: from its BEGIN to its COMMIT, on its connection. */
  const transactionOf = (trips: ReadonlyArray<RoundTrip>, marker: string): Array<string> => {
    const at = trips.findIndex((trip) => trip.text.includes(marker))
    expect(at).toBeGreaterThanOrEqual(0)
    const own = trips.filter((trip) => trip.connection === trips[at]!.connection)
    const index = own.indexOf(trips[at]!)
    const begin = own.slice(0, index + 1).findLastIndex((trip) => trip.text.startsWith("BEGIN"))
    const end = own.findIndex((trip, i) => i >= index && /(^|; )COMMIT\b/.test(trip.text))
    return own.slice(begin, end + 1).map((trip) => trip.text.replace(/\s+/g, " "))
  }

  it("stores a keyed create with its answer in one transaction of four round trips, its writes sent with the statements after them", async () => {
    const key = organizationLockKey(await organizationId(server))
    server.clock.advance(60_000)
    const from = proxy.roundTrips.length
    const created = await server.request("POST", "/knowledgebases", { body: { name: "Counted" }, headers: { "idempotency-key": "round-trips-1" } })
    expect(created.status).toBe(201)
    const trips = proxy.roundTrips.slice(from)
    const orgId = await organizationId(server)
    expect(transactionOf(trips, "INSERT INTO idempotency_keys")).toEqual([
      // BEGIN, the isolation and the organization's lock with the key's look-up.
      `${firstStatement(key)}; SELECT request_hash, status, body FROM idempotency_keys WHERE organization_id = '${orgId}' AND address = 'POST /api/v1/knowledgebases' AND key = 'round-trips-1' AND state = 'done' AND expires_at > '${server.clock.now()}'`,
      // The create's savepoint (a refusal is stored while the create is undone) and its service's, with its count.
      `SAVEPOINT effect_sql_1; SAVEPOINT effect_sql_2; SELECT count(*) AS n FROM knowledgebases WHERE organization_id = '${orgId}'`,
      // The insert of the Knowledgebase, whose answer nobody reads, with the stored answer's (RETURNING).
      expect.stringMatching(/^INSERT INTO knowledgebases \(.*'Counted'.*\); INSERT INTO idempotency_keys \(.*'round-trips-1'.* RETURNING key$/),
      commitAndAdvance
    ])
    const replayed = await server.request("POST", "/knowledgebases", { body: { name: "Counted" }, headers: { "idempotency-key": "round-trips-1" } })
    expect(replayed.status).toBe(201)
    expect(replayed.text).toBe(created.text)
  })

  it("patches a page reading it once, inside its transaction", async () => {
    const kb = await server.request("POST", "/knowledgebases", { body: { name: "Patched" } })
    const page = await server.request("POST", `/knowledgebases/${kb.body.knowledgebase.id}/pages`, { body: { title: "One", bodyMarkdown: "# One\n\nText.\n" } })
    expect(page.status).toBe(201)
    const path = `/knowledgebases/${kb.body.knowledgebase.id}/pages/${page.body.page.id}`
    const key = organizationLockKey(await organizationId(server))
    server.clock.advance(60_000)
    const from = proxy.roundTrips.length
    const patched = await server.request("PATCH", path, { body: { patch: [{ op: "append", text: "More.\n" }] } })
    expect(patched.status).toBe(200)
    const trips = proxy.roundTrips.slice(from)
    expect(trips.filter((trip) => trip.text.includes("FROM pages WHERE")).length).toBe(1)
    expect(transactionOf(trips, "UPDATE pages SET markdown")).toEqual([
      `${firstStatement(key)}; SELECT * FROM pages WHERE knowledgebase_id = '${kb.body.knowledgebase.id}' AND id = '${page.body.page.id}'`,
      // Its five writes, whose answers nobody reads, with the COMMIT.
      expect.stringMatching(
        /^UPDATE pages SET markdown = .*; INSERT INTO page_revisions .*; DELETE FROM page_links .*; INSERT INTO changes .*; UPDATE knowledgebases .*; COMMIT; SELECT nextval\('svc_data_version'\)$/
      )
    ])
    const read = await server.request("GET", path)
    expect(read.body.page.markdown).toBe("# One\n\nText.\nMore.\n")
  })

  it("refuses a patch that does not apply, writing nothing", async () => {
    const kb = await server.request("POST", "/knowledgebases", { body: { name: "Refused" } })
    const page = await server.request("POST", `/knowledgebases/${kb.body.knowledgebase.id}/pages`, { body: { title: "Two", bodyMarkdown: "# Two\n" } })
    const path = `/knowledgebases/${kb.body.knowledgebase.id}/pages/${page.body.page.id}`
    const refused = await server.request("PATCH", path, { body: { patch: [{ op: "replace", find: "not in the page", text: "x" }] } })
    expect(refused.status).toBe(400)
    expect(refused.body.error.code).toBe("invalid_request")
    const read = await server.request("GET", path)
    expect(read.body.page.markdown).toBe("# Two\n")
    const revisions = await server.request("GET", `${path}/revisions`)
    expect(revisions.status).toBe(200)
    expect(revisions.body.revisions.length).toBe(1)
  })
})
