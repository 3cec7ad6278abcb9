/**
 * Client ID Metadata Documents at MCP sign-in, over HTTP on a real server: the MCP SDK's own client
 * names itself by an https URL (`clientMetadataUrl`) and signs in without registering; the server
 * fetches the document from a local https server (the test certificate authority trusted through
 * the server's `clientMetadata.ca`, loopback reachable through `allowPrivateUrls`), keeps it as
 * its `Cache-Control` says, and refuses URLs and documents that break the rules with the error
 * page, nothing written (each request counted against its address first). A server with the default settings fetches nothing on a loopback address.
 */
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writtenRows } from "../support/admission.js"
import { sql } from "../support/fixtures.js"
import { onSqlite } from "../support/postgres.js"
import { type DocumentServer, startDocumentServer } from "../support/https-documents.js"
import { call } from "../support/mcp.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { testCaCertificate } from "../support/test-tls.js"
import { authorizationUrl, initializeWith, pkcePair, redirectUrl, signIn, startSignInServer, TestOAuthProvider, tokenRequest } from "./sign-in-support.js"

let server: TestServer
let web: DocumentServer

beforeAll(async () => {
  web = await startDocumentServer()
  server = await startSignInServer(["ada@example.com"], { server: { allowPrivateUrls: true, clientMetadata: { ca: testCaCertificate, timeoutMs: 1_000 } } })
})
afterAll(async () => {
  await server.stop()
  await web.close()
})

/** The rows of the sign-in tables (not the rate limiter's log: refused requests are counted, as every OAuth request is). */
const written = async () => {
  const { counted: _counted, ...rows } = await writtenRows(server, ["mcp_oauth_clients", "mcp_sign_in_codes", "mcp_authorization_codes", "mcp_sessions"])
  return rows
}

/** A metadata document for the client whose id is `clientId`. */
const documentOf = (clientId: string, extra: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: "Metadata client",
  redirect_uris: [redirectUrl],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  ...extra
})

/** Publishes `body` at `path` of the document server; answers the client id (its URL). */
const publish = (path: string, body: unknown, headers: Record<string, string> = {}) => {
  web.set(path, { body: typeof body === "string" ? body : JSON.stringify(body), headers })
  return `${web.origin}${path}`
}

/** The authorization page for `clientId` on `on`: status, title, HTML, the error page's text and redirect. */
const authorizePage = async (clientId: string, on: TestServer = server, extra: Record<string, string> = {}) => {
  const response = await fetch(authorizationUrl(on, clientId, "/mcp", pkcePair().challenge, extra), { redirect: "manual" })
  const html = await response.text()
  const text = (/<p>([^<]*)<\/p>/.exec(html)?.[1] ?? "").replaceAll("&#39;", "'").replaceAll("&quot;", '"').replaceAll("&amp;", "&")
  return { status: response.status, title: /<h1>([^<]*)<\/h1>/.exec(html)?.[1] ?? "", html, text, location: response.headers.get("location") }
}

/** An SDK provider whose client names itself by its metadata document's URL. */
class DocumentProvider extends TestOAuthProvider {
  clientMetadataUrl = ""
}

describe("the MCP SDK's client named by its metadata document", () => {
  it("signs in without registering: the document is fetched once, its client recorded with the code, and the client acts as the member", async () => {
    const clientId = publish("/sdk/client.json", documentOf(`${web.origin}/sdk/client.json`))
    const before = await written()
    const provider = new DocumentProvider(server, { email: "ada@example.com" })
    provider.clientMetadataUrl = clientId
    const url = new URL("/mcp", server.origin)
    await expect(new Client({ name: "svc-test", version: "1.0.0" }).connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))).rejects.toBeInstanceOf(
      UnauthorizedError
    )
    expect(provider.info?.client_id).toBe(clientId)
    expect(provider.authorizations[0]!.searchParams.get("client_id")).toBe(clientId)
    expect(web.hits("/sdk/client.json")).toBe(1)
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await transport.finishAuth(provider.code!)
    const client = new Client({ name: "svc-test", version: "1.0.0" })
    await client.connect(transport)
    const who = (await call(client, "whoami")).body
    expect(who.organization.slug).toBe("acme")
    expect(who.connection).toMatchObject({ kind: "sign_in", client: "Metadata client" })
    await client.close()
    const rows = await sql(server, (db) => db<{ id: string; name: string }>`SELECT id, name FROM mcp_oauth_clients WHERE id = ${clientId}`)
    expect(rows).toEqual([{ id: clientId, name: "Metadata client" }])
    expect((await written()).mcp_oauth_clients).toBe(before.mcp_oauth_clients! + 1)
    expect(web.hits("/sdk/client.json")).toBe(1)
  })

  it("the page names the host that publishes the document beside the client's name, and warns when the approval goes to this computer", async () => {
    const page = await authorizePage(publish("/named/client.json", documentOf(`${web.origin}/named/client.json`, { client_name: "Named one" })))
    expect(page.status).toBe(200)
    expect(page.html).toContain(`<strong>Named one</strong> (described by <code>${new URL(web.origin).host}</code>)`)
    expect(page.html).toContain("Any program on your computer can say it is Named one")
    const https = await authorizePage(publish("/web/client.json", documentOf(`${web.origin}/web/client.json`, { redirect_uris: ["https://client.example/cb"] })), server, {
      redirect_uri: "https://client.example/cb"
    })
    expect(https.status).toBe(200)
    expect(https.html).not.toContain("Any program on your computer")
  })

  it("a second sign-in brings the client's row up to date with the document, and the token endpoint needs no fetch", async () => {
    const path = "/again/client.json"
    const clientId = `${web.origin}${path}`
    for (const name of ["First name", "Second name"]) {
      publish(path, documentOf(clientId, { client_name: name }), { "cache-control": "no-store" })
      server.clock.advance(61_000)
      const pkce = pkcePair()
      const back = await signIn(server, authorizationUrl(server, clientId, "/mcp", pkce.challenge), { email: "ada@example.com" })
      const hits = web.hits(path)
      const tokens = await tokenRequest(server, {
        grant_type: "authorization_code",
        client_id: clientId,
        code: back.searchParams.get("code")!,
        code_verifier: pkce.verifier,
        redirect_uri: redirectUrl
      })
      expect(tokens.status).toBe(200)
      expect(web.hits(path)).toBe(hits)
      expect((await initializeWith(server, "/mcp", tokens.body.access_token)).status).toBe(200)
      const rows = await sql(server, (db) => db<{ name: string }>`SELECT name FROM mcp_oauth_clients WHERE id = ${clientId}`)
      expect(rows).toEqual([{ name }])
    }
  })
})

describe("keeping documents", () => {
  it("a document is used for its max-age, then fetched again (and its changes seen)", async () => {
    const path = "/cached/client.json"
    const clientId = publish(path, documentOf(`${web.origin}${path}`, { client_name: "Cached v1" }), { "cache-control": "public, max-age=120" })
    expect((await authorizePage(clientId)).title).toBe("Sign in to connect Cached v1")
    publish(path, documentOf(clientId, { client_name: "Cached v2" }), { "cache-control": "max-age=120" })
    server.clock.advance(100_000)
    expect((await authorizePage(clientId)).title).toBe("Sign in to connect Cached v1")
    expect(web.hits(path)).toBe(1)
    server.clock.advance(30_000)
    expect((await authorizePage(clientId)).title).toBe("Sign in to connect Cached v2")
    expect(web.hits(path)).toBe(2)
  })

  it("no-store is kept the one-minute floor; without Cache-Control five minutes", async () => {
    const path = "/floor/client.json"
    const clientId = publish(path, documentOf(`${web.origin}${path}`), { "cache-control": "no-store" })
    await authorizePage(clientId)
    server.clock.advance(59_000)
    await authorizePage(clientId)
    expect(web.hits(path)).toBe(1)
    server.clock.advance(2_000)
    await authorizePage(clientId)
    expect(web.hits(path)).toBe(2)
    const plain = "/plain/client.json"
    const plainId = publish(plain, documentOf(`${web.origin}${plain}`))
    await authorizePage(plainId)
    server.clock.advance(299_000)
    await authorizePage(plainId)
    expect(web.hits(plain)).toBe(1)
    server.clock.advance(2_000)
    await authorizePage(plainId)
    expect(web.hits(plain)).toBe(2)
  })
})

describe("URLs and documents that cannot be used", () => {
  it("each is refused with the error page naming why, and nothing is written", async () => {
    const at = (path: string) => `${web.origin}${path}`
    web.set("/slow.json", { hang: true })
    web.set("/moved.json", { status: 302, headers: { location: at("/x/client.json") } })
    web.set("/html.json", { headers: { "content-type": "text/html" }, body: JSON.stringify(documentOf(at("/html.json"))) })
    const cases: Array<[clientId: string, says: string, fetched: boolean]> = [
      [`http://127.0.0.1:${new URL(web.origin).port}/x/client.json`, "it is not an https URL", false],
      [`${web.origin}/`, "it has no path", false],
      [`https://user:pw@${new URL(web.origin).host}/x/client.json`, "it carries a user name or password", false],
      [`${web.origin}/x/client.json#frag`, "it has a fragment", false],
      [`${web.origin}/a/../x/client.json`, "its path has . or .. segments", false],
      [`https://127.0.0.1:${new URL(web.origin).port}/x/client.json`.replace("https", "HTTPS"), "it is not written in its normal form", false],
      [publish("/other-id.json", documentOf(at("/somewhere-else.json"))), "the document's client_id is not the URL it was fetched from", true],
      [publish("/jwt.json", documentOf(at("/jwt.json"), { token_endpoint_auth_method: "private_key_jwt" })), "token_endpoint_auth_method private_key_jwt is not supported here", true],
      [publish("/secret.json", documentOf(at("/secret.json"), { token_endpoint_auth_method: "client_secret_basic" })), "needs a shared secret", true],
      [publish("/holds-secret.json", documentOf(at("/holds-secret.json"), { client_secret: "s3cret" })), "holds a client secret", true],
      [publish("/creds.json", documentOf(at("/creds.json"), { redirect_uris: ["https://u:p@client.example/cb"] })), "carries a user name or password", true],
      [publish("/no-redirects.json", documentOf(at("/no-redirects.json"), { redirect_uris: [] })), "lists no redirect_uris", true],
      [publish("/implicit.json", documentOf(at("/implicit.json"), { grant_types: ["implicit"] })), "grant_types: 'implicit' is not supported", true],
      [publish("/broken.json", "{ not json"), "the document is not valid JSON", true],
      [publish("/array.json", "[]"), "the document is not a JSON object", true],
      [publish("/big.json", documentOf(at("/big.json"), { client_uri: `https://client.example/${"a".repeat(6_000)}` })), "over the 5 KB limit", true],
      [at("/html.json"), "served as text/html, not application/json", true],
      [at("/missing.json"), "answered with HTTP status 404, not 200", true],
      [at("/moved.json"), "answered with a redirect, and redirects are not followed", true],
      [at("/slow.json"), "could not be fetched", true]
    ]
    const before = await written()
    const countedBefore = (await writtenRows(server, [])).counted
    for (const [clientId, says, fetched] of cases) {
      const asked = web.requests.length
      const page = await authorizePage(clientId)
      expect([page.status, page.title, page.location], clientId).toEqual([400, "Client metadata not usable", null])
      expect(page.text, clientId).toContain(says)
      expect(web.requests.length > asked, clientId).toBe(fetched)
    }
    expect(web.hits("/x/client.json")).toBe(0)
    expect(await written()).toEqual(before)
    // Each was counted against the address before anything was fetched (PostgreSQL's limiter keeps one row per counted request).
    if (!onSqlite) expect((await writtenRows(server, [])).counted).toBe(countedBefore! + cases.length)
  })

  it("a redirect URI the document does not list is refused as for a registered client", async () => {
    const clientId = publish("/listed/client.json", documentOf(`${web.origin}/listed/client.json`))
    const response = await fetch(authorizationUrl(server, clientId, "/mcp", pkcePair().challenge, { redirect_uri: "https://evil.example/cb" }), { redirect: "manual" })
    expect(response.status).toBe(400)
    expect(response.headers.get("location")).toBeNull()
    expect(await response.text()).toContain("Wrong redirect address")
  })

  it("a URL client id that was never issued a code gets invalid_grant at the token endpoint, and nothing is fetched", async () => {
    const clientId = publish("/never/client.json", documentOf(`${web.origin}/never/client.json`))
    const refused = await tokenRequest(server, { grant_type: "authorization_code", client_id: clientId, code: "some-code", code_verifier: pkcePair().verifier, redirect_uri: redirectUrl })
    expect(refused).toEqual({ status: 400, body: { error: "invalid_grant", error_description: "The authorization code is not valid for this client." } })
    expect(web.hits("/never/client.json")).toBe(0)
  })
})

describe("a server with the default settings", () => {
  it("fetches no document on a loopback address: refused before any connection, nothing written", async () => {
    const strict = await startTestServer()
    try {
      const clientId = publish("/strict/client.json", documentOf(`${web.origin}/strict/client.json`))
      const page = await authorizePage(clientId, strict)
      expect([page.status, page.title]).toEqual([400, "Client metadata not usable"])
      expect(page.html).toContain("127.0.0.1 is not a public address")
      expect(web.hits("/strict/client.json")).toBe(0)
      expect(await writtenRows(strict, ["mcp_oauth_clients"])).toMatchObject({ mcp_oauth_clients: 0 })
    } finally {
      await strict.stop()
    }
  })
})
