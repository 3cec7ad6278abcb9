/**
 * Unknown query parameters are refused everywhere, not only on lists: for every operation of
 * `GET /openapi.json`, a parameter it does not declare is 400 `invalid_request` naming it (and
 * nothing runs); the parameters it declares are still taken.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countKnowledgebases, expectError } from "../support/fixtures.js"
import { type DocumentFixture, startDocumentFixture } from "../support/operations.js"
import type { TestServer } from "../support/server.js"

let server: TestServer
let fixture: DocumentFixture
beforeAll(async () => {
  fixture = await startDocumentFixture("Query parameters")
  server = fixture.server
})
afterAll(() => server.stop())

/** Every operation of the document, its path filled with real ids, and the query names it declares. */
const operations = (): Array<{ method: string; path: string; declared: Array<string>; takesBody: boolean }> =>
  fixture.operations().map(({ method, path, operation }) => ({
    method,
    path,
    declared: (operation.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name as string),
    takesBody: operation.requestBody !== undefined
  }))

describe("unknown query parameters", () => {
  it("the document lists GET operations with and without query parameters (sanity)", () => {
    const gets = operations().filter((operation) => operation.method === "GET")
    expect(gets.filter((operation) => operation.declared.length === 0).length).toBeGreaterThanOrEqual(3)
    expect(gets.filter((operation) => operation.declared.length > 0).length).toBeGreaterThanOrEqual(3)
  })

  it("every GET operation refuses one, naming it", async () => {
    for (const operation of operations().filter((op) => op.method === "GET")) {
      const response = await server.request("GET", `${operation.path}?bogus=1`)
      const message = expectError(response, 400, "invalid_request")
      expect(message, `${operation.method} ${operation.path}`).toContain("bogus")
    }
  })

  it("every other operation refuses one too, and nothing runs", async () => {
    const before = await countKnowledgebases(server)
    const others = operations().filter((op) => op.method !== "GET")
    expect(others.length).toBeGreaterThan(0)
    for (const operation of others) {
      const response = await server.request(operation.method, `${operation.path}?bogus=1`, operation.takesBody ? { body: { name: "Never" } } : {})
      expect(expectError(response, 400, "invalid_request"), `${operation.method} ${operation.path}`).toContain("bogus")
    }
    expect(await countKnowledgebases(server)).toBe(before)
  })

  it("all the unknown names are given", async () => {
    const message = expectError(await server.request("GET", `/knowledgebases/${fixture.ids.id}?one=1&two=2`), 400, "invalid_request")
    expect(message).toContain("one")
    expect(message).toContain("two")
  })

  it("declared parameters are still taken", async () => {
    expect((await server.request("GET", "/knowledgebases?limit=1&fields=id,name")).status).toBe(200)
    expect((await server.request("GET", `/knowledgebases/${fixture.ids.id}/pages?limit=1`)).status).toBe(200)
  })
})
