/**
 * Origin validation and CORS on the MCP addresses, the metadata documents and the OAuth endpoints
 * (issue 23; `server/http/origin-guard.ts`), over real sockets to a real server listening on
 * loopback with two listed origins: another origin, `Origin: null` and a foreign `Host` (DNS
 * rebinding, as the MCP conformance suite's `dns-rebinding-protection` sends it) get 403 in the
 * door's error shape before anything is authenticated, read or written; loopback, own and listed
 * origins pass with CORS headers; preflights are answered; requests without `Origin` are served as
 * before; the REST API is not guarded.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writtenRows } from "../support/admission.js"
import { personalKey } from "../support/mcp.js"
import { type HeaderResponse, sendWithHeaders } from "../support/header-request.js"
import { startTestServer, type TestServer } from "../support/server.js"

const listed = "https://app.example"
const listedWithPort = "http://tools.example:3000"
let server: TestServer
/** A personal key of an admin: MCP takes personal keys only. */
let key: string

beforeAll(async () => {
  server = await startTestServer({ server: { allowedOrigins: [`${listed}/`, listedWithPort] } })
  key = await personalKey(server, "ana@example.com", "admin")
})
afterAll(() => server.stop())

const exposed = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, X-Request-Id"
const originRefusal = (origin: string) =>
  `Requests from the origin ${origin} are not allowed here; the server takes them from loopback origins, its own origin and those listed with svc serve --allowed-origins.`
const hostRefusal = (hostname: string) =>
  `This server listens on a loopback address and is not reached as ${hostname} (a guard against DNS rebinding); to serve under that name, list its origin with svc serve --allowed-origins.`

const initialize = (id = 1) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "origin-test", version: "1.0.0" } } })

/** A POST to an MCP address with the headers MCP clients send, the server's key unless `key` is null, and `extra`. */
const mcpPost = (path: string, extra: Record<string, string>, body = initialize(), bearer: string | null = key) =>
  sendWithHeaders(
    server.origin,
    "POST",
    path,
    { "content-type": "application/json", accept: "application/json, text/event-stream", ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }), ...extra },
    body
  )

const ownHost = () => new URL(server.origin).host

const expectMcpRefusal = (response: HeaderResponse, message: string) => {
  expect(response.status).toBe(403)
  expect(response.headers["content-type"]).toBe("application/json")
  expect(JSON.parse(response.text)).toEqual({ jsonrpc: "2.0", error: { code: -32000, message: `Forbidden: ${message}` }, id: null })
  expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{32}$/)
  expect(response.headers["mcp-session-id"]).toBeUndefined()
  expect(response.headers["access-control-allow-origin"]).toBeUndefined()
}

const expectCors = (response: HeaderResponse, origin: string) => {
  expect(response.headers["access-control-allow-origin"]).toBe(origin)
  expect(response.headers["access-control-expose-headers"]).toBe(exposed)
  expect(response.headers["vary"]).toBe("Origin")
  expect(response.headers["access-control-allow-credentials"]).toBeUndefined()
}

describe("Origin on the MCP addresses", () => {
  it("refuses another origin, an opaque one and a listed host on another port with 403 and a JSON-RPC error, before the key is even read", async () => {
    for (const origin of ["http://evil.example", "null", "https://app.example:8443", "http://localhost.evil.example", "https://app.example.evil", "file://"]) {
      for (const path of ["/mcp", "/mcp/", "/api/v1/orgs/default/mcp"]) {
        expectMcpRefusal(await mcpPost(path, { origin }), originRefusal(origin))
        // Without a key it is still the 403, not the 401: the refusal comes first.
        expectMcpRefusal(await mcpPost(path, { origin }, initialize(), null), originRefusal(origin))
      }
    }
  })

  it("a tool call from another origin on an open session writes nothing; the same call without Origin does", async () => {
    const opened = await mcpPost("/mcp", {})
    expect(opened.status).toBe(200)
    const session = { "mcp-session-id": String(opened.headers["mcp-session-id"]), "mcp-protocol-version": "2025-11-25" }
    expect((await mcpPost("/mcp", session, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))).status).toBe(202)
    const create = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "create_knowledgebase", arguments: { name: "Rebound notes" } } })
    const before = await writtenRows(server, ["knowledgebases"])

    expectMcpRefusal(await mcpPost("/mcp", { ...session, origin: "http://evil.example" }, create(2)), originRefusal("http://evil.example"))
    expect(await writtenRows(server, ["knowledgebases"])).toEqual(before)
    expect((await server.request("GET", "/knowledgebases")).body.knowledgebases.map((kb: { name: string }) => kb.name)).not.toContain("Rebound notes")

    const done = await mcpPost("/mcp", session, create(3))
    expect(done.status).toBe(200)
    expect(JSON.parse(done.text).result.isError).not.toBe(true)
    expect((await server.request("GET", "/knowledgebases")).body.knowledgebases.map((kb: { name: string }) => kb.name)).toContain("Rebound notes")
  })

  it("DNS rebinding: a foreign Host with its Origin, or alone, is refused; the server's own Host and Origin are served", async () => {
    expectMcpRefusal(await mcpPost("/mcp", { host: "evil.example.com", origin: "http://evil.example.com" }), hostRefusal("evil.example.com"))
    expectMcpRefusal(await mcpPost("/mcp", { host: `evil.example.com:${new URL(server.origin).port}` }), hostRefusal("evil.example.com"))

    for (const host of [ownHost(), `localhost:${new URL(server.origin).port}`, `[::1]:${new URL(server.origin).port}`]) {
      const served = await mcpPost("/mcp", { host, origin: `http://${host}` })
      expect(served.status).toBe(200)
      expect(JSON.parse(served.text).result.protocolVersion).toBe("2025-11-25")
      expectCors(served, `http://${host}`)
    }
    // A listed origin's host may be the Host (a reverse proxy that forwards it).
    const proxied = await mcpPost("/mcp", { host: "app.example", origin: listed })
    expect(proxied.status).toBe(200)
    expectCors(proxied, listed)
  })

  it("serves loopback origins on any port and the listed origins, with the CORS headers", async () => {
    for (const origin of ["http://localhost:6274", "http://127.0.0.1:9", "http://[::1]:3000", "https://localhost", listed, listedWithPort]) {
      const served = await mcpPost("/mcp", { origin })
      expect(served.status).toBe(200)
      expect(served.headers["mcp-session-id"]).toMatch(/\S/)
      expectCors(served, origin)
    }
  })

  it("serves a request without Origin as before: no Allow-Origin, only Vary", async () => {
    const served = await mcpPost("/mcp", {})
    expect(served.status).toBe(200)
    expect(served.headers["access-control-allow-origin"]).toBeUndefined()
    expect(served.headers["access-control-expose-headers"]).toBeUndefined()
    expect(served.headers["vary"]).toBe("Origin")
  })

  it("a 401 to an allowed origin lets the browser read WWW-Authenticate to start signing in", async () => {
    const refused = await mcpPost("/mcp", { origin: listed }, initialize(), null)
    expect(refused.status).toBe(401)
    expect(refused.headers["www-authenticate"]).toBe(`Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp"`)
    expectCors(refused, listed)
  })
})

describe("through the MCP SDK's client", () => {
  const sdkClient = async (origin: string) => {
    const transport = new StreamableHTTPClientTransport(new URL("/mcp", server.origin), {
      requestInit: { headers: { authorization: `Bearer ${key}`, origin } }
    })
    const client = new Client({ name: "origin-sdk-test", version: "1.0.0" })
    await client.connect(transport)
    return client
  }

  it("cannot connect from another origin, and connects and lists tools from a listed one", async () => {
    await expect(sdkClient("http://evil.example")).rejects.toThrow(`Error POSTing to endpoint: ${JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: `Forbidden: ${originRefusal("http://evil.example")}` }, id: null })}`)
    const client = await sdkClient(listed)
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("list_knowledgebases")
    } finally {
      await client.close()
    }
  })
})

describe("preflights", () => {
  const preflight = (path: string, origin: string | null) =>
    sendWithHeaders(server.origin, "OPTIONS", path, {
      ...(origin === null ? {} : { origin }),
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type, mcp-protocol-version, mcp-session-id"
    })

  const corsPaths = [
    "/mcp",
    "/api/v1/orgs/default/mcp",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/oauth/register",
    "/oauth/token",
    "/oauth/revoke"
  ]

  it("are answered 204 for allowed origins on the MCP addresses, /.well-known/* and the OAuth endpoints, with exact headers", async () => {
    for (const path of corsPaths) {
      for (const origin of [listed, "http://localhost:6274"]) {
        const answer = await preflight(path, origin)
        expect(answer.status).toBe(204)
        expect(answer.text).toBe("")
        expect(answer.headers["access-control-allow-origin"]).toBe(origin)
        expect(answer.headers["access-control-allow-methods"]).toBe("GET, POST, DELETE, OPTIONS")
        expect(answer.headers["access-control-allow-headers"]).toBe(
          "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name"
        )
        expect(answer.headers["access-control-max-age"]).toBe("7200")
        expect(answer.headers["vary"]).toBe("Origin")
        expect(answer.headers["access-control-allow-credentials"]).toBeUndefined()
      }
    }
  })

  it("are refused with 403 for other origins", async () => {
    for (const path of corsPaths) {
      const answer = await preflight(path, "http://evil.example")
      expect(answer.status).toBe(403)
      expect(answer.headers["access-control-allow-origin"]).toBeUndefined()
    }
  })

  it("without Origin, OPTIONS is answered as before (the MCP address's 401, the OAuth endpoint's 404)", async () => {
    expect((await preflight("/mcp", null)).status).toBe(401)
    expect((await preflight("/oauth/token", null)).status).toBe(404)
  })

  it("the pages take no CORS: the sign-in page and a Portal answer no preflight", async () => {
    for (const path of ["/oauth/authorize", "/portals/00000000-0000-4000-8000-000000000000/"]) {
      const answer = await preflight(path, listed)
      expect(answer.status).not.toBe(204)
      expect(answer.headers["access-control-allow-origin"]).toBeUndefined()
    }
  })
})

describe("the metadata documents and the OAuth endpoints", () => {
  const oauthRows = () => writtenRows(server, ["mcp_oauth_clients", "mcp_sign_in_codes", "mcp_authorization_codes", "mcp_sessions", "outbox_emails"])
  const registration = JSON.stringify({ client_name: "Web client", redirect_uris: ["http://127.0.0.1:9/callback"] })

  const expectOAuthRefusal = (response: HeaderResponse, origin: string) => {
    expect(response.status).toBe(403)
    expect(response.headers["content-type"]).toBe("application/json")
    expect(response.headers["cache-control"]).toBe("no-store")
    expect(JSON.parse(response.text)).toEqual({ error: "access_denied", error_description: originRefusal(origin) })
    expect(response.headers["access-control-allow-origin"]).toBeUndefined()
  }

  it("refuse another origin in the OAuth error shape and register nothing", async () => {
    const before = await oauthRows()
    const origin = "http://evil.example"
    expectOAuthRefusal(await sendWithHeaders(server.origin, "POST", "/oauth/register", { origin, "content-type": "application/json" }, registration), origin)
    expectOAuthRefusal(
      await sendWithHeaders(server.origin, "POST", "/oauth/token", { origin, "content-type": "application/x-www-form-urlencoded" }, "grant_type=refresh_token&client_id=x&refresh_token=y"),
      origin
    )
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"]) {
      expectOAuthRefusal(await sendWithHeaders(server.origin, "GET", path, { origin }), origin)
    }
    expect(await oauthRows()).toEqual(before)
  })

  it("serve an allowed origin with CORS headers: registration and metadata", async () => {
    const before = await oauthRows()
    const registered = await sendWithHeaders(server.origin, "POST", "/oauth/register", { origin: listed, "content-type": "application/json" }, registration)
    expect(registered.status).toBe(201)
    expect(JSON.parse(registered.text).client_id).toMatch(/\S/)
    expectCors(registered, listed)
    expect((await oauthRows()).mcp_oauth_clients).toBe(before.mcp_oauth_clients! + 1)

    const metadata = await sendWithHeaders(server.origin, "GET", "/.well-known/oauth-authorization-server", { origin: "http://localhost:6274" })
    expect(metadata.status).toBe(200)
    expect(JSON.parse(metadata.text).issuer).toBe(server.origin)
    expectCors(metadata, "http://localhost:6274")
  })

  it("the sign-in page refuses a form from another origin with a page, and shows the origin escaped", async () => {
    const origin = "http://<b>evil</b>.example"
    const refused = await sendWithHeaders(server.origin, "POST", "/oauth/authorize", { origin, "content-type": "application/x-www-form-urlencoded" }, "email=a%40b.example")
    expect(refused.status).toBe(403)
    expect(refused.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(refused.headers["x-frame-options"]).toBe("DENY")
    expect(refused.text).toContain("<h1>Not allowed from there</h1>")
    expect(refused.text).toContain("http://&lt;b&gt;evil&lt;/b&gt;.example")
    expect(refused.text).not.toContain("<b>evil")
    expect(refused.text).toContain("Nothing was done.")
  })
})

describe("the REST API", () => {
  it("is not guarded: another origin and a foreign Host are served as before, without CORS headers", async () => {
    const answer = await sendWithHeaders(server.origin, "GET", "/api/v1/knowledgebases", {
      host: "evil.example.com",
      origin: "http://evil.example.com",
      authorization: `Bearer ${server.key}`
    })
    expect(answer.status).toBe(200)
    expect(answer.headers["access-control-allow-origin"]).toBeUndefined()
    expect(answer.headers["vary"]).toBeUndefined()
  })
})
