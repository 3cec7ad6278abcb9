/**
 * Answers Node's HTTP server gives before a request reaches the API (417 for an unsupported
 * `Expect`, 431 for oversized headers, 400 for bytes that are not HTTP) carry the error envelope
 * and an `X-Request-Id`, like every other answer. Sent over raw sockets: `fetch` cannot send these.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countKnowledgebases, requestIdPattern } from "../support/fixtures.js"
import { sendRaw } from "../support/raw-http.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

const head = (lines: ReadonlyArray<string>) =>
  [...lines, `host: ${new URL(server.origin).host}`, `authorization: Bearer ${server.key}`].join("\r\n")

const expectEnvelope = (response: Awaited<ReturnType<typeof sendRaw>>, status: number, code: string) => {
  expect({ timedOut: response.timedOut, status: response.status }).toEqual({ timedOut: false, status })
  expect(response.headers["content-type"]).toMatch(/^application\/json/)
  expect(response.headers["x-request-id"]).toMatch(requestIdPattern)
  expect(JSON.parse(response.body)).toEqual({ error: { code, message: expect.any(String) } })
}

describe("Node's own answers carry the envelope and a request id", () => {
  it("Expect: nonsense → 417 invalid_request, and the request does not run", async () => {
    const before = await countKnowledgebases(server)
    const response = await sendRaw(
      server.origin,
      head(["POST /api/v1/knowledgebases HTTP/1.1", "content-type: application/json", "expect: nonsense"]),
      JSON.stringify({ name: "Never created" })
    )
    expectEnvelope(response, 417, "invalid_request")
    expect(JSON.parse(response.body).error.message).toContain("100-continue")
    expect(await countKnowledgebases(server)).toBe(before)
  })

  it("Expect: 100-continue still works", async () => {
    const before = await countKnowledgebases(server)
    const response = await sendRaw(
      server.origin,
      head(["POST /api/v1/knowledgebases HTTP/1.1", "content-type: application/json", "expect: 100-continue"]),
      JSON.stringify({ name: "Created after continue" })
    )
    expect(response.timedOut).toBe(false)
    expect(await countKnowledgebases(server)).toBe(before + 1)
  })

  it("headers over Node's limit → 431 invalid_request", async () => {
    const response = await sendRaw(
      server.origin,
      head(["GET /api/v1/knowledgebases HTTP/1.1", `x-padding: ${"a".repeat(20_000)}`])
    )
    expectEnvelope(response, 431, "invalid_request")
  })

  it("a request line that is not HTTP → 400 invalid_request", async () => {
    const response = await sendRaw(server.origin, "THIS IS NOT HTTP\r\nhost: x")
    expectEnvelope(response, 400, "invalid_request")
  })
})
