/**
 * Plain calls (one JSON-RPC request POSTed in an open session) are answered around the SDK's web
 * transport (`session-transport.ts`): the answer must be the one the SDK's transport gives for the
 * same request (a batch of one, which the SDK's transport answers as a single JSON object), and
 * every request that is not plain must still get the SDK transport's own answer.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SessionTransport } from "../../server/mcp/session-transport.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { personalKey } from "../support/mcp.js"

let server: TestServer
let headers: Record<string, string>

const post = (body: unknown, extra: Record<string, string> = {}) =>
  fetch(new URL("/mcp?tools=knowledge", server.origin), { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) })

/** Status, the headers that matter and the body of an answer. */
const answerOf = async (response: Response) => ({
  status: response.status,
  contentType: response.headers.get("content-type"),
  sessionId: response.headers.get("mcp-session-id"),
  body: (await response.json()) as any
})

beforeAll(async () => {
  server = await startTestServer()
  const key = await personalKey(server, "plain@example.com", "member")
  headers = { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" }
  const opened = await post({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "plain", version: "1" } } })
  await opened.text()
  headers = { ...headers, "mcp-session-id": opened.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-06-18" }
  expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202)
})

afterAll(async () => {
  await server.close()
})

describe("plain MCP calls", () => {
  it("answer exactly as the SDK's transport answers the same request", async () => {
    const requests = [
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "list_knowledgebases", arguments: { limit: 5 } } },
      { jsonrpc: "2.0", id: "text-id", method: "tools/call", params: { name: "read_page", arguments: { knowledgebaseId: "Nope", pageId: "nope" } } },
      { jsonrpc: "2.0", id: 8, method: "ping" },
      { jsonrpc: "2.0", id: 9, method: "no/such/method" },
      { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "list_knowledgebases", arguments: { limit: "many" } } }
    ]
    for (const request of requests) {
      const plain = await answerOf(await post(request))
      const throughSdk = await answerOf(await post([request]))
      expect(plain).toEqual(throughSdk)
      expect(plain.status).toBe(200)
      expect(plain.sessionId).toBe(headers["mcp-session-id"])
      expect(plain.body.id).toBe(request.id)
    }
  })

  it("carries a request id on every answer", async () => {
    const response = await post({ jsonrpc: "2.0", id: 11, method: "ping" })
    expect(response.headers.get("x-request-id")).toMatch(/^req_/)
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: 11, result: {} })
  })

  it("leaves requests that are not plain to the SDK's transport and its refusals", async () => {
    const ping = { jsonrpc: "2.0", id: 12, method: "ping" }
    const version = await post(ping, { "mcp-protocol-version": "1999-01-01" })
    expect(version.status).toBe(400)
    expect(((await version.json()) as any).error.message).toContain("Unsupported protocol version")
    const accept = await post(ping, { accept: "application/json" })
    expect(accept.status).toBe(406)
    await accept.text()
    const mediaType = await post(ping, { "content-type": "text/plain" })
    expect(mediaType.status).toBe(415)
    await mediaType.text()
    const noMethod = await post({ jsonrpc: "2.0", id: 13 })
    expect(noMethod.status).toBe(400)
    expect(((await noMethod.json()) as any).error.code).toBe(-32700)
    const reinitialize = await post({ jsonrpc: "2.0", id: 14, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "again", version: "1" } } })
    expect(reinitialize.status).toBe(400)
    expect(((await reinitialize.json()) as any).error.message).toContain("already initialized")
  })
})

describe("SessionTransport", () => {
  it("answers a plain call still waiting when the connection closes, and says it closed", async () => {
    const transport = new SessionTransport(new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => "s", enableJsonResponse: true }))
    let closed = false
    transport.onclose = () => {
      closed = true
    }
    transport.onmessage = () => undefined
    const waiting = transport.call({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow" } }, {}, new URL("http://127.0.0.1/mcp"))
    await transport.close()
    expect(await waiting).toEqual({ jsonrpc: "2.0", id: 1, error: { code: ErrorCode.ConnectionClosed, message: "Connection closed" } })
    expect(closed).toBe(true)
  })
})
