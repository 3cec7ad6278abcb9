/**
 * Helpers of the admission tests of the Portal and OAuth doors: what a request wrote (row counts of
 * the tables it could write, and on PostgreSQL the shared rate limiter's log, which holds one row
 * per counted request), and the next minute of the test clock.
 */
import { sql } from "./fixtures.js"
import { onSqlite } from "./postgres.js"
import type { TestServer } from "./server.js"

/** The rows of each of `tables`, and on PostgreSQL `counted`: the requests the rate limiter counted. */
export const writtenRows = async (server: TestServer, tables: ReadonlyArray<string>): Promise<Record<string, number>> => {
  const rows: Record<string, number> = {}
  for (const table of [...tables, ...(onSqlite ? [] : ["rate_limit_hits"])]) {
    rows[table === "rate_limit_hits" ? "counted" : table] = Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM ${db(table)}`))[0]!.n)
  }
  return rows
}

/** A new minute on the test clock: every rate bucket's window is empty again. */
export const nextMinute = (server: TestServer): void => server.clock.advance(61_000)
