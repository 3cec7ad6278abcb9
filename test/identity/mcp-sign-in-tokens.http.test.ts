/**
 * The tokens of MCP sign-in: PKCE, single-use codes bound to client and redirect URI, the binding
 * to the approved address, expiry and refresh with rotation (the SDK's client refreshes by itself),
 * revocation (RFC 7009 and `svc members revoke-session`), a removed member, REST refusing them.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { expectFailure, removeDataDirs, svc, svcJson } from "../cli/helpers.js"
import type { TestServer } from "../support/server.js"
import { call } from "../support/mcp.js"
import { codeByHand, connectSignedIn, exchange, initializeWith, startSignInServer, tokenRequest } from "./sign-in-support.js"

let server: TestServer

const hour = 60 * 60_000

beforeAll(async () => {
  server = await startSignInServer(["cy@example.com", "dee@example.com", "eve@example.com", "fay@example.com"])
})
afterAll(async () => {
  await server.stop()
  await removeDataDirs()
})

describe("authorization codes", () => {
  it("refuses a wrong PKCE verifier and a wrong redirect URI, then exchanges once; a second use is refused and ends the session", async () => {
    const made = await codeByHand(server, "/mcp", { email: "cy@example.com" })
    const wrongVerifier = await exchange(server, made, { code_verifier: "x".repeat(64) })
    expect(wrongVerifier).toEqual({ status: 400, body: { error: "invalid_grant", error_description: expect.stringContaining("code_verifier") } })
    const wrongRedirect = await exchange(server, made, { redirect_uri: "http://127.0.0.1:9/elsewhere" })
    expect(wrongRedirect).toEqual({ status: 400, body: { error: "invalid_grant", error_description: expect.stringContaining("redirect_uri") } })
    const otherClient = await exchange(server, made, { client_id: "00000000-0000-4000-8000-000000000000" })
    expect(otherClient.body.error).toBe("invalid_grant")
    const tokens = await exchange(server, made)
    expect(tokens.status).toBe(200)
    expect(tokens.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, access_token: expect.stringMatching(/^svcma_/), refresh_token: expect.stringMatching(/^svcmr_/) })
    expect((await initializeWith(server, "/mcp", tokens.body.access_token)).status).toBe(200)
    const reused = await exchange(server, made)
    expect(reused).toEqual({ status: 400, body: { error: "invalid_grant", error_description: expect.stringContaining("already used") } })
    const after = await initializeWith(server, "/mcp", tokens.body.access_token)
    expect(after.status).toBe(401)
    expect(((await after.json()) as any).error.code).toBe("api_key_revoked")
  })

  it("refuses a code after its five minutes", async () => {
    const made = await codeByHand(server, "/mcp", { email: "cy@example.com" })
    server.clock.advance(5 * 60_000 + 1)
    expect((await exchange(server, made)).body).toEqual({ error: "invalid_grant", error_description: "The authorization code expired." })
  })
})

describe("the approved address", () => {
  it("a token approved at /mcp is refused at the workspace address and the other way round; REST refuses both", async () => {
    const any = await exchange(server, await codeByHand(server, "/mcp", { email: "dee@example.com" }))
    const fixed = await exchange(server, await codeByHand(server, "/api/v1/orgs/acme/mcp", { email: "dee@example.com" }))
    expect((await initializeWith(server, "/mcp", any.body.access_token)).status).toBe(200)
    expect((await initializeWith(server, "/api/v1/orgs/acme/mcp", fixed.body.access_token)).status).toBe(200)
    for (const [path, token] of [
      ["/api/v1/orgs/acme/mcp", any.body.access_token],
      ["/mcp", fixed.body.access_token]
    ] as const) {
      const refused = await initializeWith(server, path, token)
      expect(refused.status).toBe(401)
      expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"')
      expect(((await refused.json()) as any).error).toMatchObject({ code: "invalid_api_key", message: expect.stringContaining("approved for the MCP address") })
    }
    for (const token of [any.body.access_token, fixed.body.access_token]) {
      const rest = await server.request("GET", "/knowledgebases", { key: token })
      expect(rest.status).toBe(401)
      expect(rest.body.error.code).toBe("invalid_api_key")
    }
  })
})

describe("expiry and refresh", () => {
  it("after an hour the SDK's client refreshes by itself and goes on; the old refresh token is refused", async () => {
    const { client, provider } = await connectSignedIn(server, "/mcp", { email: "eve@example.com" })
    const before = provider.saved!
    expect((await call(client, "whoami")).body.member.email).toBe("eve@example.com")
    server.clock.advance(hour + 1)
    expect((await initializeWith(server, "/mcp", before.access_token)).status).toBe(401)
    provider.browse = false
    expect((await call(client, "whoami")).body.member.email).toBe("eve@example.com")
    expect(provider.authorizations).toHaveLength(1)
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token)
    expect(provider.saved!.access_token).not.toBe(before.access_token)
    const old = await tokenRequest(server, { grant_type: "refresh_token", client_id: provider.info!.client_id, refresh_token: before.refresh_token! })
    expect(old).toEqual({ status: 400, body: { error: "invalid_grant", error_description: expect.any(String) } })
    expect((await call(client, "whoami")).body.member.email).toBe("eve@example.com")
    await client.close()
  })
})

describe("ending sessions", () => {
  it("svc members sessions lists the session; revoke-session fails the very next request and the refresh", async () => {
    const { client, provider } = await connectSignedIn(server, "/api/v1/orgs/acme/mcp", { email: "fay@example.com" })
    expect((await call(client, "whoami")).body.connection.kind).toBe("sign_in")
    const listed = await svcJson(["members", "sessions", "--org", "acme", "--email", "fay@example.com"], server.dataDir)
    expect(listed.sessions).toHaveLength(1)
    const session = listed.sessions[0]
    expect(session).toEqual({
      id: expect.any(String),
      clientName: "Test MCP client",
      address: "/api/v1/orgs/acme/mcp",
      createdAt: expect.any(String),
      lastUsedAt: expect.any(String),
      expiresAt: expect.any(String),
      revokedAt: null
    })
    const human = await svc(["members", "sessions", "--org", "acme", "--email", "fay@example.com"], server.dataDir)
    expect(human.code).toBe(0)
    expect(human.stdout).toContain(session.id)
    expect(human.stdout).toContain("Test MCP client")
    expect(expectFailure(await svc(["members", "revoke-session", "--org", "default", session.id], server.dataDir), 1)).toContain("No sign-in session")
    expect((await initializeWith(server, "/api/v1/orgs/acme/mcp", provider.saved!.access_token)).status).toBe(200)
    const ended = await svcJson(["members", "revoke-session", "--org", "acme", session.id], server.dataDir)
    expect(ended.session.revokedAt).not.toBeNull()
    const next = await initializeWith(server, "/api/v1/orgs/acme/mcp", provider.saved!.access_token)
    expect(next.status).toBe(401)
    expect(((await next.json()) as any).error.code).toBe("api_key_revoked")
    provider.browse = false
    await expect(call(client, "whoami")).rejects.toThrow()
    const refresh = await tokenRequest(server, { grant_type: "refresh_token", client_id: provider.info!.client_id, refresh_token: provider.saved?.refresh_token ?? "none" })
    expect(refresh.status).toBe(400)
  })

  it("POST /oauth/revoke ends the session of a token (RFC 7009), and answers 200 for an unknown token", async () => {
    const made = await codeByHand(server, "/mcp", { email: "cy@example.com" })
    const tokens = (await exchange(server, made)).body
    const revoke = (token: string) =>
      fetch(new URL("/oauth/revoke", server.origin), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, client_id: made.clientId })
      })
    expect((await revoke("svcmr_unknown")).status).toBe(200)
    expect((await revoke(tokens.refresh_token)).status).toBe(200)
    expect((await initializeWith(server, "/mcp", tokens.access_token)).status).toBe(401)
  })

  it("removing the member fails the next request and the refresh", async () => {
    await server.addMember("gus@example.com", "member", "acme")
    const made = await codeByHand(server, "/mcp", { email: "gus@example.com" })
    const tokens = (await exchange(server, made)).body
    expect((await initializeWith(server, "/mcp", tokens.access_token)).status).toBe(200)
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.removeMember("acme", "gus@example.com")))
    const next = await initializeWith(server, "/mcp", tokens.access_token)
    expect(next.status).toBe(401)
    expect(((await next.json()) as any).error.code).toBe("api_key_revoked")
    const refresh = await tokenRequest(server, { grant_type: "refresh_token", client_id: made.clientId, refresh_token: tokens.refresh_token })
    expect(refresh.body.error).toBe("invalid_grant")
  })

  it("sessions are not keys: svc keys list leaves them out and the personal-key limit does not count them", async () => {
    await server.addMember("hal@example.com", "member", "acme")
    for (let i = 0; i < 2; i++) await exchange(server, await codeByHand(server, "/mcp", { email: "hal@example.com" }))
    for (let i = 0; i < 5; i++) await server.createKey({ org: "acme", name: `hal ${i}`, scopes: "all", personalFor: "hal@example.com" })
    const keys = await svcJson(["keys", "list", "--org", "acme"], server.dataDir)
    expect(keys.keys.filter((key: { name: string }) => key.name.startsWith("hal "))).toHaveLength(5)
    expect(keys.keys.some((key: { prefix: string }) => key.prefix === "sign-in")).toBe(false)
  })
})
