/**
 * Regressions for what the reliability suite (`npm run soak`, bench/soak/) found: each test is one
 * finding, reproduced as the fuzz or tenancy part sent it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError } from "../support/fixtures.js"
import { onSqlite } from "../support/postgres.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let kb: string
beforeAll(async () => {
  server = await startTestServer({ server: { ingestionWorker: false, requestsPerMinute: 1_000_000 } })
  kb = (await server.request("POST", "/knowledgebases", { body: { name: "Findings" } })).body.knowledgebase.id
})
afterAll(() => server.stop())

describe("a date-time query parameter that is not one", () => {
  // fuzz: GET /knowledgebases/{id}/changes?since=never answered "since: updatedSince must be …",
  // naming a parameter the request did not send
  it("names the parameter that was sent, once", async () => {
    for (const [path, name] of [
      [`/knowledgebases/${kb}/changes?since=never`, "since"],
      [`/knowledgebases/${kb}/sources?updatedSince=yesterday`, "updatedSince"],
      ["/agents?updatedSince=2026-13-40", "updatedSince"]
    ] as const) {
      const message = expectError(await server.request("GET", path), 400, "invalid_request")
      expect(message).toBe(`${name}: must be an ISO 8601 date-time, such as 2026-01-31T09:00:00Z`)
    }
  })
})

describe("a query parameter that takes one value", () => {
  // fuzz: GET /executions/{id}?view=x answered "view: Expected `summary` leaves out tool arguments.,
  // actual "x"" (the parameter's description read as what was expected); so did include= on lists
  it("says which value it takes", async () => {
    for (const [path, expected] of [
      [`/executions/${kb}?view=x`, 'view: must be "summary" or "full"'],
      ["/agents?include=all", 'include: must be "drafts"'],
      ["/flows?include=all", 'include: must be "drafts"'],
      ["/apps?include=all", 'include: must be "drafts"']
    ] as const) {
      const message = expectError(await server.request("GET", path), 400, "invalid_request")
      expect(message).toBe(expected)
    }
  })
})

describe("the NUL character (U+0000)", () => {
  // fuzz on PostgreSQL: GET /flows/%00 (and every id slot) answered 500: PostgreSQL text cannot hold
  // U+0000, so the lookup itself failed; SQLite answered 404
  it("in the address is refused with 400 on both backends, before any lookup", async () => {
    for (const [method, path] of [
      ["GET", "/flows/%00"],
      ["GET", `/knowledgebases/${kb}/pages/%00/revisions`],
      ["DELETE", "/user-groups/%00"],
      ["GET", "/end-users?email=a%00b%40example.com"]
    ] as const) {
      const message = expectError(await server.request(method, path), 400, "invalid_request")
      expect(message).toBe("The address may not contain the NUL character (%00).")
    }
  })

  // The same fuzz, with U+0000 inside a JSON string: PostgreSQL refuses to store it (a 500 before)
  it("in a JSON body is stored on SQLite and refused with 400 on PostgreSQL, never a 500", async () => {
    const response = await server.request("POST", "/knowledgebases", { body: { name: "nul\u0000name" } })
    if (onSqlite) expect(response.status).toBe(201)
    else expect(expectError(response, 400, "invalid_request")).toBe("Text may not contain the NUL character (U+0000).")
  })
})
