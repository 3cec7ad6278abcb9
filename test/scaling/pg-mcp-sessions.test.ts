/**
 * MCP sessions served by any instance on one PostgreSQL database (issue 24): a session initialized
 * through one instance is used through another (the SDK's client, its requests sent to the
 * instances in turn), deleted through either, and then 404 on every instance; a session is still
 * its key's and address's only, wherever it is used. (pg project only.)
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, personalKey } from "../support/mcp.js"
import { createTestDatabase } from "../support/postgres.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"

let database: { readonly url: string; readonly drop: () => Promise<void> }
let a: TestServer
let b: TestServer
let key: string

beforeAll(async () => {
  database = await createTestDatabase()
  const clock = new ManualClock()
  a = await startTestServer({ clock, server: { database: database.url, requestsPerMinute: 100_000 } })
  b = await startTestServer({ clock, key: a.key, server: { database: database.url, requestsPerMinute: 100_000 } })
  key = await personalKey(a, "roaming@example.com", "member")
})
afterAll(async () => {
  await a?.stop()
  await b?.stop()
  await database?.drop()
})

/**
 * An SDK client whose HTTP requests go to the instances `route` names in turn (request n to
 * `route(n)`), as a load balancer without stickiness would send them; `sent` records where each went.
 */
const roamingClient = async (route: (n: number) => TestServer) => {
  const sent: Array<{ method: string; origin: string; status: number }> = []
  const fetchVia = async (input: string | URL | Request, init?: RequestInit) => {
    const target = route(sent.length)
    const url = new URL(input instanceof Request ? input.url : input)
    const routed = new URL(`${url.pathname}${url.search}`, target.origin)
    const response = await fetch(routed, init)
    sent.push({ method: init?.method ?? "GET", origin: target.origin, status: response.status })
    return response
  }
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", a.origin), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: fetchVia })
  const client = new Client({ name: "roaming", version: "1.0.0" }, { capabilities: {} })
  await client.connect(transport)
  return { client, transport, sent }
}

/** A raw `ping` in session `id` through `server`: its status. */
const ping = async (server: TestServer, id: string, secret = key) =>
  (
    await fetch(new URL("/mcp", server.origin), {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18", "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" })
    })
  ).status

const stored = (id: string) =>
  a.admin(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (db) => db<{ key_id: string; address: string }>`SELECT key_id, address FROM mcp_connections WHERE id = ${id}`)))

describe("an MCP session on two instances", () => {
  it("is initialized through one, used through the other, deleted through either, then 404 on both", async () => {
    for (const deleteThrough of [() => a, () => b]) {
      // initialize (and its notification) through a, everything after through b.
      const { client, transport, sent } = await roamingClient((n) => (n < 2 ? a : b))
      const sessionId = transport.sessionId!
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/)
      expect(await stored(sessionId)).toHaveLength(1)
      const tools = (await client.listTools()).tools.map((tool) => tool.name)
      expect(tools).toContain("whoami")
      const who = await call(client, "whoami")
      expect(who.isError).toBe(false)
      // The connection is the session's, whichever instance answers (activity is recorded per connection).
      expect(who.body).toMatchObject({ organization: { slug: "default" }, connectionId: `mcp_${sessionId.replace(/-/g, "")}` })
      expect(sent.slice(0, 2).map((one) => one.origin)).toEqual([a.origin, a.origin])
      expect(sent.slice(2).map((one) => one.origin)).toEqual(sent.slice(2).map(() => b.origin))
      expect(sent.every((one) => one.status < 300)).toBe(true)
      // Used again through a, which opened it, and through b.
      expect(await ping(a, sessionId)).toBe(200)
      expect(await ping(b, sessionId)).toBe(200)
      const ended = await fetch(new URL("/mcp", deleteThrough().origin), {
        method: "DELETE",
        headers: { authorization: `Bearer ${key}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }
      })
      expect(ended.status).toBe(200)
      expect(await stored(sessionId)).toEqual([])
      expect(await ping(a, sessionId)).toBe(404)
      expect(await ping(b, sessionId)).toBe(404)
      await client.close().catch(() => undefined)
    }
  })

  it("is refused 404 through the other instance to another key, and stays usable by its own", async () => {
    const { transport } = await roamingClient(() => a)
    const sessionId = transport.sessionId!
    const other = await personalKey(a, "someone-else@example.com", "member")
    expect(await ping(b, sessionId, other)).toBe(404)
    expect(await ping(a, sessionId, other)).toBe(404)
    expect(await ping(b, sessionId)).toBe(200)
    expect(await stored(sessionId)).toEqual([{ key_id: expect.any(String), address: "*" }])
  })

  it("keeps at most 50 sessions per key across instances, forgetting the least recently used everywhere", async () => {
    const secret = await personalKey(a, "many-roaming@example.com", "member")
    const ids: Array<string> = []
    for (let n = 0; n < 51; n++) {
      const opened = await fetch(new URL("/mcp", (n % 2 === 0 ? a : b).origin), {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
      })
      expect(opened.status).toBe(200)
      await opened.text()
      ids.push(opened.headers.get("mcp-session-id")!)
    }
    expect(await ping(a, ids[0]!, secret)).toBe(404)
    expect(await ping(b, ids[0]!, secret)).toBe(404)
    expect(await ping(a, ids[50]!, secret)).toBe(200)
    expect(await ping(b, ids[1]!, secret)).toBe(200)
  })
})
