/**
 * The error envelope `{error:{code,message}}` with the contract's statuses and an `X-Request-Id`
 * on every response: unknown routes, wrong methods, bodies that are not JSON, fail validation or
 * are too large, authentication failures, and defects (500 without internals).
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countKnowledgebases, expectError, requestIdPattern, sql } from "../support/fixtures.js"
import { postChunked } from "../support/raw-http.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { onSqlite } from "../support/postgres.js"

const run = promisify(execFile)

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

const createWith = (body: unknown) => server.request("POST", "/knowledgebases", { body })

/** Asserts a refused create wrote nothing. */
const expectNothingWritten = async (run: () => Promise<void>) => {
  const before = await countKnowledgebases(server)
  await run()
  expect(await countKnowledgebases(server)).toBe(before)
}

describe("unknown routes and wrong methods", () => {
  it.each(["/nope", "/knowledgebases/x/y/z", "/agent"])("GET %s → 404 not_found", async (path) => {
    expectError(await server.request("GET", path), 404, "not_found")
  })

  it("outside the API root too", async () => {
    for (const path of ["/", "/api/v2/knowledgebases", "/favicon.ico"]) {
      const response = await fetch(`${server.origin}${path}`)
      const body = await response.json()
      expect({ path, status: response.status, body }).toEqual({
        path,
        status: 404,
        body: { error: { code: "not_found", message: expect.any(String) } }
      })
      expect(response.headers.get("x-request-id")).toMatch(requestIdPattern)
    }
  })

  it.each([
    ["DELETE", "/knowledgebases"],
    ["PUT", "/knowledgebases"],
    ["PATCH", "/agents"],
    ["PUT", "/agents"]
  ])("%s %s → 405 method_not_allowed with Allow (docs/decisions.md), writing nothing", async (method, path) => {
    await expectNothingWritten(async () => {
      const answer = await server.request(method, path, { body: { name: "x" } })
      expectError(answer, 405, "method_not_allowed")
      expect(answer.headers.get("allow")).toBe("GET, HEAD, POST")
    })
  })
})

describe("request bodies", () => {
  it("malformed JSON → 400 invalid_request, nothing written", async () => {
    await expectNothingWritten(async () => {
      for (const text of ["{bad", '{"name": "x",}', "", "nul"]) {
        const response = await createWith(text)
        expect({ text, message: expectError(response, 400, "invalid_request") }).toEqual({
          text,
          message: text === "" ? expect.any(String) : "The request body is not valid JSON."
        })
      }
    })
  })

  it("a schema failure names the field", async () => {
    await expectNothingWritten(async () => {
      expect(expectError(await createWith({ name: 5 }), 400, "invalid_request")).toMatch(/\bname\b/)
      expect(expectError(await createWith({}), 400, "invalid_request")).toMatch(/\bname\b/)
      expect(expectError(await createWith({ name: "ok", description: 7 }), 400, "invalid_request")).toMatch(/\bdescription\b/)
      expectError(await createWith([]), 400, "invalid_request")
      expectError(await createWith("42"), 400, "invalid_request")
    })
  })

  it("an unknown property is refused, naming it", async () => {
    await expectNothingWritten(async () => {
      expect(expectError(await createWith({ name: "x", colour: "red" }), 400, "invalid_request")).toContain("colour")
    })
  })

  it("several unknown properties are all named", async () => {
    await expectNothingWritten(async () => {
      const message = expectError(await createWith({ name: "x", colour: "red", size: 3 }), 400, "invalid_request")
      expect(message).toContain("colour")
      expect(message).toContain("size")
    })
  })

  it("a body over 4.5 MB → 413 payload_too_large, nothing written", async () => {
    await expectNothingWritten(async () => {
      const big = JSON.stringify({ name: "Big", description: "x".repeat(4_600_000) })
      expectError(await createWith(big), 413, "payload_too_large")
    })
  })

  it("a client in another process that keeps sending a declared 5 MB body still receives the 413, not a reset", async () => {
    const client = `
      const [url, key] = process.argv.slice(1)
      const statuses = []
      for (let attempt = 0; attempt < 3; attempt++) {
        const form = new FormData()
        form.append("file", new Blob([new Uint8Array(5_000_000).fill(65)], { type: "text/plain" }), "big.txt")
        try {
          const response = await fetch(url, { method: "POST", headers: { authorization: "Bearer " + key }, body: form })
          statuses.push(response.status + " " + (await response.json()).error.code)
        } catch (error) {
          statuses.push("failed: " + (error.cause?.code ?? error.message))
        }
      }
      console.log(JSON.stringify(statuses))`
    await expectNothingWritten(async () => {
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", client, `${server.baseUrl}/knowledgebases`, server.key])
      expect(JSON.parse(stdout)).toEqual(Array(3).fill("413 payload_too_large"))
    })
  })

  it("a chunked body over 4.5 MB (no Content-Length) → 413 payload_too_large, nothing written", async () => {
    await expectNothingWritten(async () => {
      function* body() {
        yield '{"name":"Chunked","description":"'
        for (let sent = 0; sent < 4_600_000; sent += 100_000) yield "x".repeat(100_000)
        yield '"}'
      }
      const response = await postChunked(
        `${server.baseUrl}/knowledgebases`,
        { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body()
      )
      expect({ status: response.status, socketError: response.socketError }).toEqual({ status: 413, socketError: null })
      expect(JSON.parse(response.body)).toEqual({ error: { code: "payload_too_large", message: expect.any(String) } })
      expect(response.headers["x-request-id"]).toMatch(requestIdPattern)
    })
  })

  it("a chunked body under the limit is read like any other", async () => {
    const response = await postChunked(
      `${server.baseUrl}/knowledgebases`,
      { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      ['{"name":', '"Chunked small"}']
    )
    expect(response.status).toBe(201)
    expect(JSON.parse(response.body).knowledgebase.name).toBe("Chunked small")
  })

  it("a body just under the limit is read and validated (400, not 413)", async () => {
    await expectNothingWritten(async () => {
      const prefix = '{"name":"Almost","description":"'
      const body = `${prefix}${"x".repeat(4_500_000 - prefix.length - 2)}"}`
      expect(Buffer.byteLength(body)).toBe(4_500_000)
      expect(expectError(await createWith(body), 400, "invalid_request")).toMatch(/description/)
    })
  })
})

describe("authentication failures carry the envelope", () => {
  it("401s", async () => {
    expectError(await server.request("GET", "/agents", { key: null }), 401, "unauthorized")
    expectError(await server.request("GET", "/agents", { key: "nope" }), 401, "invalid_api_key")
  })
})

describe("request ids", () => {
  it("every response has its own, and an incoming X-Request-Id is not echoed", async () => {
    const responses = await Promise.all([
      server.request("GET", "/knowledgebases"),
      server.request("GET", "/agents"),
      server.request("GET", "/nope"),
      server.request("GET", "/agents", { key: null }),
      server.request("POST", "/knowledgebases", { body: "{bad" }),
      server.request("GET", "/openapi.json", { key: null }),
      ...Array.from({ length: 20 }, () => server.request("GET", "/agents", { headers: { "x-request-id": "mine" } }))
    ])
    const ids = responses.map((r) => r.headers.get("x-request-id"))
    for (const id of ids) expect(id).toMatch(requestIdPattern)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

// SQLite only: the defects are provoked with SQLite's `PRAGMA`s and triggers.
describe.runIf(onSqlite)("defects", () => {
  let broken: TestServer
  beforeAll(async () => {
    broken = await startTestServer()
    await sql(broken, (db) => db`DROP TABLE agents`)
  })
  afterAll(() => broken.stop())

  it("a failing database → 500 server_error with no internals, and a request id", async () => {
    const response = await broken.request("GET", "/agents")
    const message = expectError(response, 500, "server_error")
    expect(Object.keys(response.body)).toEqual(["error"])
    expect(Object.keys(response.body.error).sort()).toEqual(["code", "message"])
    for (const leak of [/\bat\s+\S+\s+\(/, /\.ts\b/, /\.js\b/, /node_modules/, /\/work\//, /sqlite/i, /SqlError/, /no such table/i, /agents/]) {
      expect({ leak: String(leak), found: leak.test(response.text) }).toEqual({ leak: String(leak), found: false })
    }
    expect(message.length).toBeLessThan(300)
  })

  it("the server keeps serving other requests", async () => {
    expect((await broken.request("GET", "/knowledgebases")).status).toBe(200)
    expect((await broken.request("POST", "/knowledgebases", { body: { name: "Still fine" } })).status).toBe(201)
    expectError(await broken.request("GET", "/agents"), 500, "server_error")
  })
})
