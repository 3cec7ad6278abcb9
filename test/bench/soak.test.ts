/**
 * The judges of the reliability suite (bench/soak/), which decide whether `npm run soak` fails:
 * the fuzz's rule for an answer, its shrinking of a failing request, the tenancy part's comparison
 * of an answer about the other organization's object with one about an object that exists nowhere,
 * and the fuzz's requests covering every operation of a document.
 */
import fc from "fast-check"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiRoot, type Operation } from "../../bench/soak/document.js"
import { ruleBroken } from "../../bench/soak/fuzz.js"
import { requestsOf } from "../../bench/soak/fuzz-requests.js"
import { SoakClient, type SoakAnswer } from "../../bench/soak/http.js"
import { minimize } from "../../bench/soak/minimize.js"
import type { SeededIds } from "../../bench/soak/seed.js"
import { judgeTwins } from "../../bench/soak/tenancy.js"

const answer = (status: number, json?: unknown): SoakAnswer => ({
  ok: true,
  status,
  headers: {},
  text: json === undefined ? "" : JSON.stringify(json),
  json
})
const get = { method: "GET", path: "/api/v1/agents" }

describe("the fuzz's rule", () => {
  it("fails 5xx, dropped connections and non-2xx answers without the envelope", () => {
    expect(ruleBroken(get, answer(500, { error: { code: "server_error", message: "x" } }))).toBe("500")
    expect(ruleBroken(get, { ok: false, error: "SocketError: other side closed" })).toMatch(/^dropped connection/)
    expect(ruleBroken(get, answer(400, { message: "no envelope" }))).toBe("400 without the error envelope")
    expect(ruleBroken(get, answer(404))).toBe("404 without the error envelope")
  })

  it("passes answers with the envelope, successes, HEAD without a body and the documented 502 run_failed", () => {
    expect(ruleBroken(get, answer(404, { error: { code: "not_found", message: "No such." } }))).toBeNull()
    expect(ruleBroken(get, answer(200, { agents: [] }))).toBeNull()
    expect(ruleBroken({ ...get, method: "HEAD" }, answer(404))).toBeNull()
    expect(ruleBroken(get, answer(502, { error: { code: "run_failed", message: "The model failed." } }))).toBeNull()
    expect(ruleBroken(get, answer(502, { error: { code: "server_error", message: "?" } }))).toBe("502")
  })
})

describe("shrinking a failing request", () => {
  let server: Server
  let client: SoakClient
  beforeAll(async () => {
    // fails (500) when the body has `boom` and the query has `x`, whatever else is sent
    server = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        const fails = body.includes("boom") && /[?&]x=/.test(request.url ?? "")
        response.writeHead(fails ? 500 : 200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    client = new SoakClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 1)
  })
  afterAll(async () => {
    await client.close()
    await new Promise((resolve) => server.close(resolve))
  })

  it("keeps only what the failure needs", async () => {
    const request = {
      method: "POST",
      path: "/api/v1/things?a=1&x=2&b=3",
      headers: { authorization: "Bearer k", "idempotency-key": "k1", "content-type": "application/json" },
      body: JSON.stringify({ name: "n".repeat(100), note: "boom", tags: [1, 2, 3] })
    }
    const small = await minimize(client, request, (_, got) => got.ok && got.status >= 500)
    expect(small.path).toBe("/api/v1/things?x=2")
    expect(small.headers).toEqual({})
    expect(JSON.parse(String(small.body))).toEqual({ note: "boom" })
  })
})

describe("the tenancy part's judge", () => {
  const names = { otherIds: ["b-1"], nowhereIds: ["n-1"], otherMarker: "soak-b" }
  const notFound = (id: string) => ({ status: 404, text: "", json: { error: { code: "not_found", message: `No agent '${id}'.` } } })

  it("lets through an answer that cannot be told from one about an id that exists nowhere", () => {
    expect(judgeTwins(notFound("b-1"), notFound("n-1"), names)).toBeNull()
    expect(judgeTwins({ status: 200, text: '{"removed":true}', json: {} }, { status: 200, text: '{"removed":true}', json: {} }, names)).toBeNull()
  })

  it("catches a different status, a different message, a success naming the other's object and the other's content", () => {
    expect(judgeTwins({ ...notFound("b-1"), status: 403 }, notFound("n-1"), names)).toMatch(/answered 403/)
    const conflict = { status: 404, text: "", json: { error: { code: "not_found", message: "Agent 'b-1' belongs to another organization." } } }
    expect(judgeTwins(conflict, notFound("n-1"), names)).toMatch(/error differs/)
    expect(judgeTwins({ status: 201, text: '{"agentIds":["b-1"]}', json: {} }, { status: 201, text: '{"agentIds":[]}', json: {} }, names)).toMatch(/took the other/)
    expect(judgeTwins({ status: 200, text: '{"name":"soak-b handbook"}', json: {} }, { status: 200, text: "{}", json: {} }, names)).toMatch(/content/)
  })
})

describe("the fuzz's requests", () => {
  it("reach every operation of a document, under the API root, the same for the same seed", () => {
    const ids = { knowledgebase: "kb-1", page: "page-1", agent: "agent-1" } as unknown as SeededIds
    const doc = {
      paths: {
        [`${apiRoot}/knowledgebases/{id}/pages/{pageId}`]: { patch: {} },
        [`${apiRoot}/agents`]: { post: { requestBody: { content: { "application/json": { schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } } } } }
      }
    }
    const operations: Array<Operation> = [
      { method: "PATCH", template: "/knowledgebases/{id}/pages/{pageId}", operation: {}, params: ["id", "pageId"] },
      { method: "POST", template: "/agents", operation: doc.paths[`${apiRoot}/agents`].post, params: [] }
    ]
    const context = { doc, ids: ["kb-1", "page-1"], own: ids, breakRate: 0.1, keys: { own: ["svco_a"], other: "svco_b" } }
    for (const op of operations) {
      const requests = fc.sample(requestsOf(op, context), { numRuns: 200, seed: 7 })
      expect(requests.every((request) => request.path.startsWith(apiRoot))).toBe(true)
      expect(requests.filter((request) => request.method === op.method).length).toBeGreaterThan(150)
      expect(fc.sample(requestsOf(op, context), { numRuns: 200, seed: 7 })).toEqual(requests)
    }
    const pages = fc.sample(requestsOf(operations[0]!, context), { numRuns: 200, seed: 3 })
    expect(pages.some((request) => request.path.startsWith(`${apiRoot}/knowledgebases/kb-1/pages/page-1`))).toBe(true)
  })
})
