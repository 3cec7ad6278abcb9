/**
 * The read fast path on PostgreSQL (`pg-read-connection.ts`): several readers on one pool (every
 * service layer builds its own) run different texts as named prepared statements on the same
 * pooled connection without their names colliding. (pg project only.)
 */
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgReads } from "../../server/platform/sql/pg-read-connection.js"
import { createTestDatabase } from "../support/postgres.js"

describe("readers sharing one pool", () => {
  let database: { readonly url: string; readonly drop: () => Promise<void> }
  let pool: pg.Pool

  beforeAll(async () => {
    database = await createTestDatabase()
    pool = new pg.Pool({ connectionString: database.url, max: 1 })
  })
  afterAll(async () => {
    await pool.end()
    await database.drop()
  })

  it("run their own texts on the same connection, each answered by its own statement", async () => {
    const first = pgReads(pool)
    const second = pgReads(pool)
    const one = await Effect.runPromise(first.all<{ n: number }>("SELECT ?::int + 1 AS n", [1]))
    const other = await Effect.runPromise(second.all<{ word: string }>("SELECT ?::text || '!' AS word", ["hi"]))
    const again = await Effect.runPromise(second.values<[number]>("SELECT ?::int + 1 AS n", [41]))
    expect(one).toEqual([{ n: 2 }])
    expect(other).toEqual([{ word: "hi!" }])
    expect(again).toEqual([[42]])
  })
})
