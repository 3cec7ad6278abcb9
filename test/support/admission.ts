/**
 * Helpers of the admission tests of the Portal and OAuth doors: what a request wrote (row counts of
 * the tables it could write, and on PostgreSQL the requests the shared rate limiter's buckets
 * count), and the next minute of the test clock.
 */
import { sql } from "./fixtures.js"
import { onSqlite } from "./postgres.js"
import type { TestServer } from "./server.js"

/** The rows of each of `tables`, and on PostgreSQL `counted`: the requests the rate limiter counted. */
export const writtenRows = async (server: TestServer, tables: ReadonlyArray<string>): Promise<Record<string, number>> => {
  const rows: Record<string, number> = {}
  for (const table of tables) {
    rows[table] = Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM ${db(table)}`))[0]!.n)
  }
  if (!onSqlite) {
    const [counted] = await sql(server, (db) => db<{ n: number }>`SELECT coalesce(sum(n), 0) AS n FROM rate_limit_buckets, unnest(counts) AS x (n)`)
    rows.counted = Number(counted!.n)
  }
  return rows
}

/** A new minute on the test clock: every rate bucket's window is empty again. */
export const nextMinute = (server: TestServer): void => server.clock.advance(61_000)
