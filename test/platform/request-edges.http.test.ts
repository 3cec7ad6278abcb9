/**
 * Requests at the edges of what a path or a body may be (issue 23): a `;` in a path segment,
 * malformed percent escapes, and JSON bodies nested thousands of levels deep. Each is answered 400 or 404 with the error envelope,
 * never 500, the same by a server with the fast lane and one without, and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { jsonNestsDeeperThan, maxJsonNesting } from "../../server/platform/request/json-nesting.js"
import { expectError } from "../support/fixtures.js"
import { postChunked } from "../support/raw-http.js"
import { startTestServer, type TestResponse, type TestServer } from "../support/server.js"

let withLane: TestServer
let withoutLane: TestServer
let kbs: Record<"withLane" | "withoutLane", string>
beforeAll(async () => {
  ;[withLane, withoutLane] = await Promise.all([
    startTestServer({ server: { ingestionWorker: false, requestsPerMinute: 1_000_000 } }),
    startTestServer({ server: { ingestionWorker: false, requestsPerMinute: 1_000_000, fastLane: { enabled: false } } })
  ])
  const create = (server: TestServer) => server.request("POST", "/knowledgebases", { body: { name: "Edges" } })
  kbs = { withLane: (await create(withLane)).body.knowledgebase.id, withoutLane: (await create(withoutLane)).body.knowledgebase.id }
})
afterAll(() => Promise.all([withLane?.stop(), withoutLane?.stop()]))

const both = async (send: (server: TestServer, kb: string) => Promise<TestResponse>) => {
  const answers = [await send(withLane, kbs.withLane), await send(withoutLane, kbs.withoutLane)]
  const [lane, router] = answers.map((answer) => ({ status: answer.status, code: answer.body?.error?.code, message: answer.body?.error?.message }))
  expect(lane).toEqual(router)
  return answers[0]!
}

/** A body nested `levels` deep: an object whose `name` is arrays nested `levels - 1` deep. */
const nested = (levels: number) => `{"name":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`

describe("a ';' in a path segment", () => {
  it.each([
    ["GET", "/agents/;x=1", "No Agent ';x=1' in this organization."],
    ["GET", "/executions/x;y", "No execution 'x;y' in this organization."],
    ["GET", "/flows/;x", "No Flow ';x' in this organization."],
    ["GET", "/knowledgebases/;x=1/pages", "No Knowledgebase ';x=1' in this organization."],
    ["GET", "//portals/;x=1/admissions", "No Portal ';x=1' in this organization."],
    ["GET", "/agents/;/draft", "No Agent ';' in this organization."]
  ])("%s %s is the id it spells: 404, whichever door serves it", async (method, path, message) => {
    const answer = await both((server) => server.request(method, path))
    expect(expectError(answer, 404, "not_found")).toBe(message)
  })

  it("is never a query: a listing followed by ';' is no endpoint, not the listing with a parameter", async () => {
    for (const path of ["/portals;x=1", "/knowledgebases;x=1", "/portals/;x=1", "/apps/;x/versions;y"]) {
      const answer = await both((server) => server.request("GET", path))
      expect(answer.status, path).toBe(404)
      expect(answer.body.error.code, path).toBe("not_found")
    }
  })

  it("in a write's path: 404 and nothing written", async () => {
    const before = [await withLane.request("GET", "/knowledgebases"), await withoutLane.request("GET", "/knowledgebases")]
    const answer = await both((server) => server.request("POST", "/knowledgebases/;x=1/sources/00000000-0000-4000-8000-000000000000/move", { body: { parentPageId: null } }))
    expectError(answer, 404, "not_found")
    expect([(await withLane.request("GET", "/knowledgebases")).body, (await withoutLane.request("GET", "/knowledgebases")).body]).toEqual(
      before.map((response) => response.body)
    )
  })
})

describe("a path segment whose percent escapes are malformed", () => {
  it.each([
    ["POST", "/orgs/%zz/mcp"],
    ["GET", "/orgs/%E2/mcp"],
    ["GET", "/agents/%zz"],
    ["GET", "/knowledgebases/%E2%82/pages"]
  ])("%s %s: 404 with the envelope, whichever door serves it, and the server goes on", async (method, path) => {
    const answer = await both((server) => server.request(method, path, method === "POST" ? { body: { jsonrpc: "2.0", id: 1, method: "ping" } } : {}))
    expectError(answer, 404, "not_found")
    for (const server of [withLane, withoutLane]) expect((await server.request("GET", "/knowledgebases")).status).toBe(200)
  })
})

describe(`JSON bodies nested more than ${maxJsonNesting} levels`, () => {
  const refusal = `The JSON body nests arrays and objects more than ${maxJsonNesting} levels deep.`

  it.each([
    ["POST", "/knowledgebases"],
    ["POST", "/agents"],
    ["POST", "/flows"],
    ["POST", "/knowledgebases/{kb}/search"],
    ["POST", "/knowledgebases/{kb}/pages"]
  ])("%s %s: 3,000 levels are 400 invalid_request, nothing written", async (method, template) => {
    const counts = async (server: TestServer) =>
      Promise.all(["/knowledgebases", "/agents", "/flows"].map(async (path) => JSON.stringify((await server.request("GET", path)).body)))
    const before = [await counts(withLane), await counts(withoutLane)]
    const answer = await both((server, kb) => server.request(method, template.replace("{kb}", kb), { body: nested(3_000) }))
    expect(expectError(answer, 400, "invalid_request")).toBe(refusal)
    expect([await counts(withLane), await counts(withoutLane)]).toEqual(before)
  })

  it(`${maxJsonNesting + 1} levels are refused; ${maxJsonNesting} are read and answered by the operation's own schema`, async () => {
    expect(expectError(await both((server) => server.request("POST", "/knowledgebases", { body: nested(maxJsonNesting) })), 400, "invalid_request")).not.toBe(
      refusal
    )
    expect(expectError(await both((server) => server.request("POST", "/knowledgebases", { body: nested(maxJsonNesting) })), 400, "invalid_request")).toMatch(
      /^name: /
    )
    expect(expectError(await both((server) => server.request("POST", "/knowledgebases", { body: nested(maxJsonNesting + 1) })), 400, "invalid_request")).toBe(
      refusal
    )
  })

  it("sent chunked (no Content-Length): the same 400", async () => {
    for (const server of [withLane, withoutLane]) {
      const answer = await postChunked(
        `${server.baseUrl}/knowledgebases`,
        { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        [nested(3_000).slice(0, 3_000), nested(3_000).slice(3_000)]
      )
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.body).error).toEqual({ code: "invalid_request", message: refusal })
    }
  })
})

describe("jsonNestsDeeperThan", () => {
  it("counts arrays and objects, not brackets inside strings or escaped quotes", () => {
    expect(jsonNestsDeeperThan("[[[]]]", 3)).toBe(false)
    expect(jsonNestsDeeperThan("[[[[]]]]", 3)).toBe(true)
    expect(jsonNestsDeeperThan('{"a":{"b":[1]}}', 3)).toBe(false)
    expect(jsonNestsDeeperThan('{"a":{"b":[{}]}}', 3)).toBe(true)
    expect(jsonNestsDeeperThan(`["${"[".repeat(100)}"]`, 1)).toBe(false)
    expect(jsonNestsDeeperThan(`["\\"[[[[", "x"]`, 1)).toBe(false)
    expect(jsonNestsDeeperThan(Buffer.from("[[[[]]]]"), 3)).toBe(true)
    expect(jsonNestsDeeperThan("[][][][]", 1)).toBe(false)
  })
})

describe("a method no operation of a known path has", () => {
  it.each([
    ["PUT", "/agents", "GET, HEAD, POST"],
    ["DELETE", "/knowledgebases", "GET, HEAD, POST"],
    ["GET", "/knowledgebases/{kb}/search", "POST"],
    ["PROPFIND", "/knowledgebases/{kb}", "GET, HEAD"],
    ["OPTIONS", "/agents", "GET, HEAD, POST"]
  ])("%s %s: 405 method_not_allowed with Allow: %s", async (method, template, allow) => {
    const answers = await Promise.all(
      ([[withLane, kbs.withLane], [withoutLane, kbs.withoutLane]] as const).map(([server, kb]) =>
        fetch(`${server.baseUrl}${template.replace("{kb}", kb)}`, { method, headers: { authorization: `Bearer ${server.key}` } })
      )
    )
    for (const answer of answers) {
      expect(answer.status).toBe(405)
      expect(answer.headers.get("allow")).toBe(allow)
      expect(answer.headers.get("x-request-id")).toMatch(/^req_/)
      expect(((await answer.json()) as any).error).toEqual({
        code: "method_not_allowed",
        message: `${method} is not an operation of this path; it takes ${allow}.`
      })
    }
  })

  it("a path no operation has stays 404, and HEAD on a listing is its GET", async () => {
    expectError(await both((server) => server.request("PUT", "/nothing-here")), 404, "not_found")
    const head = await fetch(`${withLane.baseUrl}/agents`, { method: "HEAD", headers: { authorization: `Bearer ${withLane.key}` } })
    expect(head.status).toBe(200)
  })

  it("writes nothing", async () => {
    const before = JSON.stringify((await withLane.request("GET", "/agents")).body)
    const answer = await fetch(`${withLane.baseUrl}/agents`, {
      method: "PUT",
      headers: { authorization: `Bearer ${withLane.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Never" })
    })
    expect(answer.status).toBe(405)
    expect(JSON.stringify((await withLane.request("GET", "/agents")).body)).toBe(before)
  })
})

/**
 * Sends `POST /knowledgebases` whose declared 100-byte body trickles a space at a time, and
 * answers what came back once the connection closed: the server's cut, or (with `leaveAfterMs`)
 * the client's own leaving.
 */
const trickledPost = async (server: TestServer, options: { readonly everyMs: number; readonly leaveAfterMs?: number }): Promise<string> => {
  const { connect } = await import("node:net")
  const target = new URL(server.baseUrl)
  return new Promise<string>((resolve) => {
    const socket = connect(Number(target.port), target.hostname)
    let received = ""
    socket.write(
      `POST /api/v1/knowledgebases HTTP/1.1\r\nhost: ${target.host}\r\nauthorization: Bearer ${server.key}\r\n` +
        `content-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`
    )
    const trickle = setInterval(() => socket.writable && socket.write(" "), options.everyMs)
    if (options.leaveAfterMs !== undefined) setTimeout(() => socket.destroy(), options.leaveAfterMs)
    socket.on("data", (chunk) => void (received += chunk.toString()))
    socket.on("close", () => {
      clearInterval(trickle)
      resolve(received)
    })
    socket.on("error", () => undefined)
  })
}

/** A server whose request log lines are kept, and whose requests have `requestArrivalMs` to arrive. */
const loggedServer = async (requestArrivalMs: number) => {
  const lines: Array<string> = []
  const server = await startTestServer({ server: { ingestionWorker: false, requestArrivalMs, requestLog: { format: "json", write: (line) => void lines.push(line) } } })
  const postStatuses = () => lines.map((line) => JSON.parse(line)).filter((entry) => entry.method === "POST").map((entry) => entry.status)
  return { server, postStatuses }
}

describe("a request body that stops arriving", () => {
  it("is cut with 408 after the arrival time, logged 408, nothing written", async () => {
    const { server: slow, postStatuses } = await loggedServer(1_000)
    try {
      const before = JSON.stringify((await slow.request("GET", "/knowledgebases")).body)
      const started = Date.now()
      const answer = await trickledPost(slow, { everyMs: 200 })
      const waited = Date.now() - started
      expect(waited).toBeGreaterThanOrEqual(1_000)
      expect(waited).toBeLessThan(10_000)
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      expect(answer).toMatch(/\r\nx-request-id: req_[0-9a-f]{32}\r\n/)
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
        error: { code: "invalid_request", message: "The request did not arrive in time." }
      })
      await expect.poll(postStatuses).toEqual([408])
      expect(JSON.stringify((await slow.request("GET", "/knowledgebases")).body)).toBe(before)
    } finally {
      await slow.stop()
    }
  })

  it("whose client leaves before the arrival time is logged 499, nothing written", async () => {
    const { server: slow, postStatuses } = await loggedServer(30_000)
    try {
      const before = JSON.stringify((await slow.request("GET", "/knowledgebases")).body)
      expect(await trickledPost(slow, { everyMs: 100, leaveAfterMs: 600 })).toBe("")
      await expect.poll(postStatuses).toEqual([499])
      expect(JSON.stringify((await slow.request("GET", "/knowledgebases")).body)).toBe(before)
    } finally {
      await slow.stop()
    }
  })
})
