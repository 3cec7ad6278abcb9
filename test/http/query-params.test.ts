/**
 * Unknown query parameters are refused everywhere, not only on lists: for every operation of
 * `GET /openapi.json`, a parameter it does not declare is 400 `invalid_request` naming it (and
 * nothing runs); the parameters it declares are still taken.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countKnowledgebases, expectError } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let doc: any
const ids: Record<string, string> = {}
beforeAll(async () => {
  server = await startTestServer({ server: { ingestionWorker: false, requestsPerMinute: 1_000_000 } })
  doc = (await server.request("GET", "/openapi.json", { key: null })).body
  ids.id = (await server.request("POST", "/knowledgebases", { body: { name: "Query parameters" } })).body.knowledgebase.id
  const kb = `/knowledgebases/${ids.id}`
  ids.pageId = (await server.request("POST", `${kb}/pages`, { body: { title: "A page", bodyMarkdown: "Words." } })).body.page.id
  ids.sourceId = (await server.request("POST", `${kb}/sources`, { body: { name: "Notes", contentText: "Some notes." } })).body.source.id
})
afterAll(() => server.stop())

/** Every operation of the document, its path filled with real ids, and the query names it declares. */
const operations = (): Array<{ method: string; path: string; declared: Array<string>; takesBody: boolean }> =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path: template.replace("/api/v1", "").replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? name),
        declared: (operation.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name as string),
        takesBody: operation.requestBody !== undefined
      }))
  )

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
    const message = expectError(await server.request("GET", `/knowledgebases/${ids.id}?one=1&two=2`), 400, "invalid_request")
    expect(message).toContain("one")
    expect(message).toContain("two")
  })

  it("declared parameters are still taken", async () => {
    expect((await server.request("GET", "/knowledgebases?limit=1&fields=id,name")).status).toBe(200)
    expect((await server.request("GET", `/knowledgebases/${ids.id}/pages?limit=1`)).status).toBe(200)
  })
})
