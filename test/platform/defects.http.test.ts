/**
 * A fault on our side is a 500, not the client's 400: a database row that no longer fits its
 * schema (corrupted behind the service's back) makes its read answer 500 `server_error` with the
 * envelope, a request id and no internals, while a request that is itself malformed stays 400.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { onSqlite } from "../support/postgres.js"

let server: TestServer
let kb: string
beforeAll(async () => {
  server = await startTestServer({ server: { ingestionWorker: false } })
  kb = (await server.request("POST", "/knowledgebases", { body: { name: "Defects" } })).body.knowledgebase.id
})
afterAll(() => server.stop())

/** Gives a source a status its schema does not have, past the table's CHECK constraint. */
const corrupt = (id: string) =>
  sql(server, (db) =>
    db`PRAGMA ignore_check_constraints = ON`.pipe(
      Effect.zipRight(db`UPDATE sources SET status = 'mislaid' WHERE id = ${id}`),
      Effect.ensuring(Effect.orDie(db`PRAGMA ignore_check_constraints = OFF`))
    )
  )

const newSource = async (name: string): Promise<string> =>
  (await server.request("POST", `/knowledgebases/${kb}/sources`, { body: { name, contentText: `Text of ${name}.` } })).body.source.id

// SQLite only: the bad row is written past its CHECK with SQLite's `PRAGMA ignore_check_constraints`.
describe.runIf(onSqlite)("a row that fails its schema", () => {
  it("reading it answers 500 server_error with the envelope, never a 400 or a stack trace", async () => {
    const id = await newSource("Corrupted")
    expect((await server.request("GET", `/knowledgebases/${kb}/sources/${id}`)).status).toBe(200)
    await corrupt(id)
    const response = await server.request("GET", `/knowledgebases/${kb}/sources/${id}`)
    const message = expectError(response, 500, "server_error")
    expect(message).toContain(response.headers.get("x-request-id"))
    expect(response.text).not.toMatch(/mislaid|status|ParseError|Expected|at .*\.(ts|js)/)
  })

  it("a query that does not decode is still the client's 400", async () => {
    for (const query of ["?limit=0", "?limit=abc", "?updatedSince=yesterday"]) {
      expectError(await server.request("GET", `/knowledgebases/${kb}/sources${query}`), 400, "invalid_request")
    }
  })

  it("a body that is not JSON, or does not fit the operation, is the client's 400", async () => {
    const path = `/knowledgebases/${kb}/sources`
    expectError(await server.request("POST", path, { body: "{not json" }), 400, "invalid_request")
    expectError(await server.request("POST", path, { body: { name: "No content" } }), 400, "invalid_request")
    const unknown = expectError(await server.request("POST", path, { body: { name: "Extra", contentText: "a", colour: "red" } }), 400, "invalid_request")
    expect(unknown).toContain("colour")
    expect(expectError(await server.request("POST", path, { body: { name: 7, contentText: "a" } }), 400, "invalid_request")).toContain("name")
    expectError(await server.request("POST", path, { body: { name: "Two", contentText: "a", url: "https://example.com" } }), 400, "invalid_request")
    expectError(await server.request("POST", "/knowledgebases", { body: "{not json" }), 400, "invalid_request")
    expectError(await server.request("POST", "/knowledgebases", { body: { name: 7 } }), 400, "invalid_request")
  })
})
