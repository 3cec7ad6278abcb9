/**
 * The redirect URIs of MCP sign-in as RFC 8252 and the MCP authorization spec (2025-11-25) want
 * them, over HTTP on a real server: a loopback redirect matches whatever its port (the MCP SDK's
 * own OAuth client signs in that way), a native app's private-use scheme (`cursor://…`) registers
 * and gets its code, and redirect URIs with a user name or password, or schemes a browser already
 * means something by, are refused at registration with nothing stored.
 */
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { OAuthClientMetadata } from "@modelcontextprotocol/sdk/shared/auth.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writtenRows } from "../support/admission.js"
import { call } from "../support/mcp.js"
import type { TestServer } from "../support/server.js"
import { authorizationUrl, Browser, initializeWith, pkcePair, registerClient, signIn, startSignInServer, TestOAuthProvider, tokenRequest } from "./sign-in-support.js"

let server: TestServer

beforeAll(async () => {
  server = await startSignInServer()
})
afterAll(() => server.stop())

/** The rows of the sign-in tables (not the rate limiter's log: refused requests are counted, as every OAuth request is). */
const written = async () => {
  const { counted: _counted, ...rows } = await writtenRows(server, ["mcp_oauth_clients", "mcp_sign_in_codes", "mcp_authorization_codes", "mcp_sessions"])
  return rows
}

/** The status and page title of the authorization page for `clientId` with `redirectUri`. */
const authorizePage = async (clientId: string, redirectUri: string) => {
  const response = await fetch(authorizationUrl(server, clientId, "/mcp", pkcePair().challenge, { redirect_uri: redirectUri }), { redirect: "manual" })
  const html = await response.text()
  return { status: response.status, title: /<h1>([^<]*)<\/h1>/.exec(html)?.[1] ?? "", location: response.headers.get("location") }
}

/** An SDK provider that registers one loopback redirect URI and asks for the code at another port of it. */
class OtherPortProvider extends TestOAuthProvider {
  override get redirectUrl() {
    return "http://127.0.0.1:40000/callback"
  }
  override get clientMetadata(): OAuthClientMetadata {
    return { ...super.clientMetadata, client_name: "Port-hopping client", redirect_uris: ["http://127.0.0.1:33333/callback"] }
  }
}

describe("loopback redirect URIs match whatever their port (RFC 8252 7.3)", () => {
  it("the MCP SDK's client registers :33333, signs in with :40000 and acts as the member", async () => {
    const url = new URL("/mcp", server.origin)
    const provider = new OtherPortProvider(server, { email: "ada@example.com" })
    await expect(new Client({ name: "svc-test", version: "1.0.0" }).connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))).rejects.toBeInstanceOf(
      UnauthorizedError
    )
    expect(provider.info).toMatchObject({ redirect_uris: ["http://127.0.0.1:33333/callback"] })
    expect(provider.authorizations[0]!.searchParams.get("redirect_uri")).toBe("http://127.0.0.1:40000/callback")
    expect(provider.code).not.toBeNull()
    const client = new Client({ name: "svc-test", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await transport.finishAuth(provider.code!)
    await client.connect(transport)
    const who = (await call(client, "whoami")).body
    expect(who.organization.slug).toBe("acme")
    expect(who.connection).toMatchObject({ kind: "sign_in", client: "Port-hopping client" })
    await client.close()
  })

  it("the port alone varies: another loopback host, path or query, or a port on an https host, is refused with the error page", async () => {
    const registered = await registerClient(server, {
      client_name: "Loopback",
      redirect_uris: ["http://127.0.0.1:33333/callback", "http://localhost/cb?app=1", "https://client.example/cb"]
    })
    expect(registered.status).toBe(201)
    const id = registered.body.client_id as string
    for (const accepted of ["http://127.0.0.1:40000/callback", "http://127.0.0.1/callback", "http://localhost:5173/cb?app=1"]) {
      expect(await authorizePage(id, accepted), accepted).toEqual({ status: 200, title: "Sign in to connect Loopback", location: null })
    }
    for (const refused of [
      "http://localhost:33333/callback",
      "http://[::1]:33333/callback",
      "http://127.0.0.1:40000/other",
      "http://127.0.0.1:40000/callback?x=1",
      "http://localhost:5173/cb",
      "https://client.example:8443/cb",
      "https://127.0.0.1:40000/callback",
      "http://user@127.0.0.1:40000/callback"
    ]) {
      expect(await authorizePage(id, refused), refused).toEqual({ status: 400, title: "Wrong redirect address", location: null })
    }
  })

  it("the code is bound to the port the request used: exchanged with the registered port it is refused", async () => {
    const registered = await registerClient(server, { client_name: "Bound", redirect_uris: ["http://127.0.0.1:33333/callback"] })
    const pkce = pkcePair()
    const back = await signIn(
      server,
      authorizationUrl(server, registered.body.client_id, "/mcp", pkce.challenge, { redirect_uri: "http://127.0.0.1:40000/callback" }),
      { email: "ada@example.com" }
    )
    expect(back.origin + back.pathname).toBe("http://127.0.0.1:40000/callback")
    const params = { grant_type: "authorization_code", client_id: registered.body.client_id, code: back.searchParams.get("code")!, code_verifier: pkce.verifier }
    const before = await written()
    expect(await tokenRequest(server, { ...params, redirect_uri: "http://127.0.0.1:33333/callback" })).toEqual({
      status: 400,
      body: { error: "invalid_grant", error_description: "redirect_uri differs from the authorization request's." }
    })
    expect(await written()).toEqual(before)
    const tokens = await tokenRequest(server, { ...params, redirect_uri: "http://127.0.0.1:40000/callback" })
    expect(tokens.status).toBe(200)
    expect((await initializeWith(server, "/mcp", tokens.body.access_token)).status).toBe(200)
  })
})

describe("private-use URI schemes of native apps (RFC 8252 7.1)", () => {
  it("registers cursor://… and com.example.app:/…, and signs in with the code sent to the scheme", async () => {
    const redirect = "cursor://anysphere.cursor-retrieval/oauth/user-svc/callback"
    const registered = await registerClient(server, { client_name: "Cursor", redirect_uris: [redirect, "com.example.app:/oauth2redirect"] })
    expect(registered.status).toBe(201)
    expect(registered.body.redirect_uris).toEqual([redirect, "com.example.app:/oauth2redirect"])
    const pkce = pkcePair()
    const browser = new Browser(authorizationUrl(server, registered.body.client_id, "/mcp", pkce.challenge, { redirect_uri: redirect }))
    const page = await browser.open()
    expect(page.status).toBe(200)
    expect(page.html).toContain("The approval is sent to <code>cursor://anysphere.cursor-retrieval</code>")
    const back = await signIn(server, browser.authorizationUrl, { email: "ada@example.com" })
    expect(back.protocol).toBe("cursor:")
    expect(`${back.protocol}//${back.host}${back.pathname}`).toBe(redirect)
    expect(back.searchParams.get("state")).toBe("s1")
    const tokens = await tokenRequest(server, {
      grant_type: "authorization_code",
      client_id: registered.body.client_id,
      code: back.searchParams.get("code")!,
      code_verifier: pkce.verifier,
      redirect_uri: redirect
    })
    expect(tokens.status).toBe(200)
    expect(tokens.body).toMatchObject({ token_type: "Bearer", access_token: expect.stringMatching(/^svcma_/) })
    expect((await initializeWith(server, "/mcp", tokens.body.access_token)).status).toBe(200)
  })

  it("an authorization error goes back to the private-use scheme too", async () => {
    const redirect = "com.example.app:/oauth2redirect"
    const registered = await registerClient(server, { client_name: "Native", redirect_uris: [redirect] })
    const response = await fetch(authorizationUrl(server, registered.body.client_id, "/mcp", pkcePair().challenge, { redirect_uri: redirect, response_type: "token" }), {
      redirect: "manual"
    })
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get("location")!)
    expect([location.protocol, location.pathname, location.searchParams.get("error"), location.searchParams.get("state")]).toEqual([
      "com.example.app:",
      "/oauth2redirect",
      "unsupported_response_type",
      "s1"
    ])
  })
})

describe("redirect URIs refused at registration", () => {
  it("a user name or password, a scheme a browser means something by, or plain http elsewhere than loopback: 400, nothing stored", async () => {
    const before = await written()
    for (const [uri, error, says] of [
      ["https://user:pw@client.example/cb", "invalid_redirect_uri", "carries a user name or password"],
      ["https://user@client.example/cb", "invalid_redirect_uri", "carries a user name or password"],
      ["http://user:pw@127.0.0.1:3000/cb", "invalid_redirect_uri", "carries a user name or password"],
      ["cursor://user:pw@anysphere/cb", "invalid_redirect_uri", "carries a user name or password"],
      ["file:///tmp/cb", "invalid_redirect_uri", "not a native app's private-use scheme"],
      ["ws://127.0.0.1:3000/cb", "invalid_redirect_uri", "not a native app's private-use scheme"],
      ["http://client.example/cb", "invalid_redirect_uri", "use https"],
      ["cursor://anysphere/cb#frag", "invalid_redirect_uri", "has a fragment"],
      ["javascript:alert(1)", "invalid_client_metadata", "javascript:"]
    ] as const) {
      const refused = await registerClient(server, { client_name: "Bad", redirect_uris: ["https://fine.example/cb", uri] })
      expect(refused.status, uri).toBe(400)
      expect(refused.body.error, uri).toBe(error)
      expect(refused.body.error_description, uri).toContain(says)
    }
    expect(await written()).toEqual(before)
  })
})
