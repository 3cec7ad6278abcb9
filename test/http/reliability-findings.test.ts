/**
 * Regressions for what the reliability suite (`npm run soak`, bench/soak/) found: each test is one
 * finding, reproduced as the fuzz or tenancy part sent it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError } from "../support/fixtures.js"
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
    for (const [path, name, value] of [
      [`/executions/${kb}?view=full`, "view", "summary"],
      ["/agents?include=all", "include", "drafts"],
      ["/flows?include=all", "include", "drafts"],
      ["/apps?include=all", "include", "drafts"]
    ] as const) {
      const message = expectError(await server.request("GET", path), 400, "invalid_request")
      expect(message).toBe(`${name}: must be "${value}"`)
    }
  })
})
