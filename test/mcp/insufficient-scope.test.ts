/**
 * Scopes at the MCP server as the MCP authorization spec (2025-11-25) wants them, over HTTP on a
 * real server: `scopes_supported` in the protected-resource metadata of both addresses and in the
 * authorization server metadata (with `client_id_metadata_document_supported`), and the 403 to an
 * organization key carrying `WWW-Authenticate: Bearer error="insufficient_scope"` with the scope
 * a connection needs, which the MCP SDK's client reads and answers by starting a sign-in.
 */
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import type { TestServer } from "../support/server.js"
import { initializeWith, startSignInServer, TestOAuthProvider } from "../identity/sign-in-support.js"

let server: TestServer

beforeAll(async () => {
  server = await startSignInServer()
})
afterAll(() => server.stop())

describe("scopes in the metadata", () => {
  it("the protected-resource metadata of both addresses and the authorization server metadata advertise the one scope, mcp", async () => {
    for (const path of ["/mcp", "/api/v1/orgs/acme/mcp"]) {
      const metadata = (await (await fetch(new URL(`/.well-known/oauth-protected-resource${path}`, server.origin))).json()) as any
      expect(metadata).toMatchObject({ resource: `${server.origin}${path}`, scopes_supported: ["mcp"] })
    }
    const as = (await (await fetch(new URL("/.well-known/oauth-authorization-server", server.origin))).json()) as any
    expect(as).toMatchObject({ scopes_supported: ["mcp"], client_id_metadata_document_supported: true, registration_endpoint: `${server.origin}/oauth/register` })
  })
})

describe("the insufficient_scope challenge", () => {
  it("an organization key gets 403 insufficient_scope with the challenge naming the scope and the address's metadata", async () => {
    const organizationKey = await server.createKey({ org: "acme", name: "robot", scopes: "all" })
    for (const path of ["/mcp", "/api/v1/orgs/acme/mcp"]) {
      const refused = await initializeWith(server, path, organizationKey)
      expect(refused.status).toBe(403)
      const body = (await refused.json()) as any
      expect(body.error.code).toBe("insufficient_scope")
      expect(refused.headers.get("www-authenticate")).toBe(
        `Bearer error="insufficient_scope", scope="mcp", resource_metadata="${server.origin}/.well-known/oauth-protected-resource${path}", error_description="${body.error.message}"`
      )
    }
  })

  it("other 403s are no scope problem and carry no challenge", async () => {
    const personal = await server.createKey({ org: "acme", name: "ada's", scopes: "all", personalFor: "ada@example.com" })
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("acme", { disable: ["mcp"] })))
    try {
      const refused = await initializeWith(server, "/mcp", personal)
      expect(refused.status).toBe(403)
      expect(((await refused.json()) as any).error.code).toBe("api_disabled")
      expect(refused.headers.get("www-authenticate")).toBeNull()
    } finally {
      await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("acme", { enable: ["mcp"] })))
    }
  })

  it("the MCP SDK's client holding an organization key reads the challenge and starts a sign-in for scope mcp", async () => {
    const organizationKey = await server.createKey({ org: "acme", name: "robot 2", scopes: "all" })
    const provider = new TestOAuthProvider(server, { email: "ada@example.com" })
    provider.saved = { access_token: organizationKey, token_type: "Bearer" }
    provider.browse = false
    const transport = new StreamableHTTPClientTransport(new URL("/mcp", server.origin), { authProvider: provider })
    await expect(new Client({ name: "svc-test", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.authorizations).toHaveLength(1)
    const asked = provider.authorizations[0]!
    expect(asked.origin + asked.pathname).toBe(`${server.origin}/oauth/authorize`)
    expect(asked.searchParams.get("scope")).toBe("mcp")
    expect(asked.searchParams.get("resource")).toBe(`${server.origin}/mcp`)
  })
})
