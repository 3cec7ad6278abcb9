/**
 * Who may connect, at which address: personal keys at both addresses, organization keys refused,
 * another workspace's address refused, 401 with `WWW-Authenticate` and the protected-resource
 * metadata, the `mcp` gate and the trial rules.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, connect, personalKey, toolNames } from "../support/mcp.js"

let server: TestServer
let memberKey: string

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

/** A raw MCP initialize POST. */
const post = (path: string, authorization?: string) =>
  fetch(new URL(path, server.origin), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(authorization === undefined ? {} : { authorization })
    },
    body: JSON.stringify(initialize)
  })

const setOrg = (slug: string, changes: Parameters<AccountsService["setOrganization"]>[1]) =>
  server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, changes)))

beforeAll(async () => {
  server = await startTestServer()
  memberKey = await personalKey(server, "member@example.com", "member")
})
afterAll(() => server.stop())

describe("MCP authentication", () => {
  it("answers 401 unauthorized with WWW-Authenticate naming the metadata when no token is sent, at both addresses", async () => {
    for (const [path, metadata] of [
      ["/mcp", "/.well-known/oauth-protected-resource/mcp"],
      ["/api/v1/orgs/default/mcp", "/.well-known/oauth-protected-resource/api/v1/orgs/default/mcp"]
    ] as const) {
      const response = await post(path)
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${server.origin}${metadata}"`)
      expect(await response.json()).toEqual({ error: { code: "unauthorized", message: expect.any(String) } })
    }
  })

  it("answers 401 invalid_api_key with WWW-Authenticate for an unknown token, and api_key_revoked for a revoked key", async () => {
    const unknown = await post("/mcp", "Bearer sk_live_unknownunknownunknownunknown")
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get("www-authenticate")).toContain(`resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp"`)
    expect(unknown.headers.get("www-authenticate")).toContain('error="invalid_token"')
    expect(((await unknown.json()) as any).error.code).toBe("invalid_api_key")

    const key = await personalKey(server, "leaver@example.com", "member")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.removeMember("default", "leaver@example.com")))
    const revoked = await post("/mcp", `Bearer ${key}`)
    expect(revoked.status).toBe(401)
    expect(((await revoked.json()) as any).error.code).toBe("api_key_revoked")
  })

  it("serves the protected-resource metadata (RFC 9728) for both addresses", async () => {
    const response = await fetch(new URL("/.well-known/oauth-protected-resource/mcp", server.origin))
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ resource: `${server.origin}/mcp`, authorization_servers: [server.origin] })
    const workspace = await fetch(new URL("/.well-known/oauth-protected-resource/api/v1/orgs/default/mcp", server.origin))
    expect(await workspace.json()).toMatchObject({ resource: `${server.origin}/api/v1/orgs/default/mcp` })
  })

  it("refuses organization keys with 403 insufficient_scope", async () => {
    const response = await post("/mcp", `Bearer ${server.key}`)
    expect(response.status).toBe(403)
    expect(((await response.json()) as any).error).toEqual({ code: "insufficient_scope", message: expect.stringContaining("Organization keys") })
  })

  it("accepts a personal key at its own workspace's address and refuses it at another's with 404 not_found", async () => {
    const client = await connect(server, memberKey, { path: "/api/v1/orgs/default/mcp" })
    expect((await call(client, "whoami")).body.organization.slug).toBe("default")
    await client.close()

    await server.createOrganization("other")
    const elsewhere = await post("/api/v1/orgs/other/mcp", `Bearer ${memberKey}`)
    expect(elsewhere.status).toBe(404)
    expect(((await elsewhere.json()) as any).error.code).toBe("not_found")
    const nowhere = await post("/api/v1/orgs/nowhere/mcp", `Bearer ${memberKey}`)
    expect(nowhere.status).toBe(404)
  })

  it("answers 403 api_disabled while the mcp gate is off", async () => {
    await setOrg("default", { disable: ["mcp"] })
    try {
      const response = await post("/mcp", `Bearer ${memberKey}`)
      expect(response.status).toBe(403)
      expect(((await response.json()) as any).error.code).toBe("api_disabled")
    } finally {
      await setOrg("default", { enable: ["mcp"] })
    }
  })

  it("refuses an unknown tool family with 400 invalid_request", async () => {
    const response = await post("/mcp?tools=knowledge,billing", `Bearer ${memberKey}`)
    expect(response.status).toBe(400)
    expect(((await response.json()) as any).error).toEqual({ code: "invalid_request", message: expect.stringContaining("'billing'") })
  })

  it("refuses a session id of another key with 404", async () => {
    const client = await connect(server, memberKey)
    const other = await personalKey(server, "second@example.com", "member")
    const sessionId = (client.transport as unknown as { sessionId: string }).sessionId
    const response = await fetch(new URL("/mcp", server.origin), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${other}`, "mcp-session-id": sessionId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
    })
    expect(response.status).toBe(404)
    await client.close()
  })
})

describe("MCP sessions over Streamable HTTP", () => {
  it("opens a session on initialize, streams on GET, and ends it on DELETE", async () => {
    const opened = await post("/mcp", `Bearer ${memberKey}`)
    expect(opened.status).toBe(200)
    const sessionId = opened.headers.get("mcp-session-id")!
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(opened.headers.get("x-request-id")).toMatch(/^req_/)
    await opened.text()
    const headers = { authorization: `Bearer ${memberKey}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }
    const abort = new AbortController()
    const stream = await fetch(new URL("/mcp", server.origin), { headers: { ...headers, accept: "text/event-stream" }, signal: abort.signal })
    expect(stream.status).toBe(200)
    expect(stream.headers.get("content-type")).toContain("text/event-stream")
    abort.abort()
    const ended = await fetch(new URL("/mcp", server.origin), { method: "DELETE", headers })
    expect(ended.status).toBe(200)
    const after = await fetch(new URL("/mcp", server.origin), {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
    })
    expect(after.status).toBe(404)
  })

  it("keeps at most 50 connections per key, closing the least recently used", async () => {
    const key = await personalKey(server, "many-sessions@example.com", "member")
    const ids: Array<string> = []
    for (let n = 0; n < 51; n++) {
      const opened = await post("/mcp", `Bearer ${key}`)
      await opened.text()
      ids.push(opened.headers.get("mcp-session-id")!)
    }
    const listIn = (sessionId: string) =>
      fetch(new URL("/mcp", server.origin), {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18", "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" })
      })
    expect((await listIn(ids[0]!)).status).toBe(404)
    expect((await listIn(ids[50]!)).status).toBe(200)
  })

  it("answers a body over the limit with 413 payload_too_large, whether its length is declared or streamed", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { padding: "x".repeat(4_600_000) } })
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${memberKey}` }
    const declared = await fetch(new URL("/mcp", server.origin), { method: "POST", headers, body: big })
    expect(declared.status).toBe(413)
    expect(declared.headers.get("x-request-id")).toMatch(/^req_/)
    expect(((await declared.json()) as any).error.code).toBe("payload_too_large")
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      }
    })
    const streamed = await fetch(new URL("/mcp", server.origin), { method: "POST", headers, body, duplex: "half" } as RequestInit)
    expect(streamed.status).toBe(413)
    expect(((await streamed.json()) as any).error.code).toBe("payload_too_large")
  })

  it("answers a body that is not JSON with 400 invalid_request", async () => {
    const response = await fetch(new URL("/mcp", server.origin), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${memberKey}` },
      body: "{not json"
    })
    expect(response.status).toBe(400)
    expect(((await response.json()) as any).error).toEqual({ code: "invalid_request", message: "The request body is not valid JSON." })
  })

  it("refuses a GET without a session with 400 invalid_request", async () => {
    const response = await fetch(new URL("/mcp", server.origin), { headers: { authorization: `Bearer ${memberKey}`, accept: "text/event-stream" } })
    expect(response.status).toBe(400)
    expect(((await response.json()) as any).error.code).toBe("invalid_request")
  })
})

describe("MCP plans", () => {
  it("on a trial allows building and Knowledgebase work and says runs are refused", async () => {
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.createOrganization({ slug: "trial", plan: "trial" })))
    await setOrg("trial", { enable: ["mcp"] })
    const key = await personalKey(server, "trialist@example.com", "admin", "trial")
    const client = await connect(server, key)
    const who = await call(client, "whoami")
    expect(who.body).toMatchObject({ organization: { slug: "trial", plan: "trial" }, runsAllowed: false })
    const created = await call(client, "create_knowledgebase", { name: "Trial notes" })
    expect(created.isError).toBe(false)
    expect(await toolNames(client)).toContain("save_page")
    await client.close()
  })

  it("works on the creator and lifetime plans (where REST does not)", async () => {
    for (const plan of ["creator", "lifetime"] as const) {
      await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.createOrganization({ slug: `on-${plan}`, plan })))
      await setOrg(`on-${plan}`, { enable: ["mcp"] })
      const key = await personalKey(server, `${plan}@example.com`, "member", `on-${plan}`)
      const client = await connect(server, key)
      expect((await call(client, "list_knowledgebases")).isError).toBe(false)
      expect((await call(client, "whoami")).body.runsAllowed).toBe(true)
      await client.close()
      const rest = await server.request("GET", "/knowledgebases", { key })
      expect(rest.status).toBe(403)
    }
  })
})
