/**
 * MCP sign-in connections driven by the MCP SDK's client auth provider over real sockets: discovery,
 * registration, the sign-in pages (email, one-time code from the outbox, workspace choice), the
 * token exchange, then tools acting as the member; the address binding, REST refusing the tokens,
 * and who may sign in at all.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { Outbox } from "../../server/provisioning/outbox/service.js"
import { removeDataDirs } from "../cli/helpers.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call } from "../support/mcp.js"
import {
  authorizationUrl,
  Browser,
  codeByHand,
  connectSignedIn,
  exchange,
  initializeWith,
  mailCount,
  mailIds,
  newCode,
  pkcePair,
  redirectUrl,
  registerClient,
  workspaceOptions
} from "./sign-in-support.js"

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
  for (const slug of ["acme", "zeta", "other"]) {
    await server.createOrganization(slug)
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, { enable: ["mcp"] })))
  }
  await server.addMember("ada@example.com", "member", "acme")
  await server.addMember("ada@example.com", "viewer", "zeta")
  await server.addMember("bob@example.com", "admin", "other")
})
afterAll(async () => {
  await server.stop()
  await removeDataDirs()
})

describe("MCP sign-in at {mcp_url}", () => {
  it("signs in with email and a one-time code, lists only the member's workspaces, and the client acts as the chosen membership", async () => {
    let offered: ReadonlyArray<string> = []
    const { client, provider } = await connectSignedIn(server, "/mcp", { email: "ada@example.com", workspace: "zeta", onChoice: (slugs) => void (offered = slugs) })
    expect(offered).toEqual(["acme", "zeta"])
    const who = (await call(client, "whoami")).body
    expect(who.organization.slug).toBe("zeta")
    expect(who.member).toMatchObject({ email: "ada@example.com", role: "viewer" })
    expect(who.connection).toMatchObject({ kind: "sign_in", client: "Test MCP client", address: "/mcp" })
    expect(who.key.kind).toBe("personal")
    const kbs = await call(client, "list_knowledgebases")
    expect(kbs.isError).toBe(false)
    expect(provider.saved?.token_type).toBe("Bearer")
    expect(provider.saved?.expires_in).toBe(3600)
    await client.close()
  })
})

describe("MCP sign-in at a workspace address", () => {
  it("fixes the workspace: no choice is asked, and the client acts in that organization", async () => {
    let asked = false
    const { client } = await connectSignedIn(server, "/api/v1/orgs/acme/mcp", { email: "ada@example.com", onChoice: () => void (asked = true) })
    expect(asked).toBe(false)
    const who = (await call(client, "whoami")).body
    expect(who.organization.slug).toBe("acme")
    expect(who.connection).toMatchObject({ kind: "sign_in", address: "/api/v1/orgs/acme/mcp" })
    await client.close()
  })

  it("a member of another organization is sent no code there, and sees the same page as anyone", async () => {
    const client = await registerClient(server, { client_name: "Probe", redirect_uris: [redirectUrl] })
    const { challenge } = pkcePair()
    const pageFor = async (email: string) => {
      const browser = new Browser(authorizationUrl(server, client.body.client_id, "/api/v1/orgs/acme/mcp", challenge))
      await browser.open()
      const visit = await browser.post({ step: "email", email })
      expect(visit.status).toBe(200)
      return visit.html.replaceAll(email, "EMAIL").replace(/value="[A-Za-z0-9_-]{32}"/g, 'value="CSRF"')
    }
    const outsider = await pageFor("bob@example.com")
    const member = await pageFor("ada@example.com")
    expect(outsider).toBe(member)
    expect(await mailCount(server, "bob@example.com")).toBe(0)
  })
})

describe("who may sign in", () => {
  it("an unknown email gets the same page as a known one and no email", async () => {
    const client = await registerClient(server, { client_name: "Probe", redirect_uris: [redirectUrl] })
    const { challenge } = pkcePair()
    const pageFor = async (email: string) => {
      const browser = new Browser(authorizationUrl(server, client.body.client_id, "/mcp", challenge))
      await browser.open()
      const visit = await browser.post({ step: "email", email })
      return { status: visit.status, html: visit.html.replaceAll(email, "EMAIL").replace(/value="[A-Za-z0-9_-]{32}"/g, 'value="CSRF"') }
    }
    const known = await pageFor("bob@example.com")
    const unknown = await pageFor("nobody@example.com")
    expect(unknown).toEqual(known)
    expect(known.html).toContain("Enter your code")
    expect(await mailCount(server, "nobody@example.com")).toBe(0)
    expect(await mailCount(server, "bob@example.com")).toBe(1)
  })

  it("a wrong code counts a try and five wrong tries spend the code", async () => {
    const client = await registerClient(server, { client_name: "Probe", redirect_uris: [redirectUrl] })
    const browser = new Browser(authorizationUrl(server, client.body.client_id, "/mcp", pkcePair().challenge))
    await browser.open()
    const before = await mailIds(server, "bob@example.com")
    await browser.post({ step: "email", email: "bob@example.com" })
    const code = (await newCode(server, "bob@example.com", before))!
    const wrong = code === "000000" ? "111111" : "000000"
    for (let i = 0; i < 5; i++) expect((await browser.post({ step: "code", email: "bob@example.com", code: wrong })).status).toBe(400)
    const late = await browser.post({ step: "code", email: "bob@example.com", code })
    expect(late.status).toBe(400)
    expect(late.html).toContain("That code did not work")
  })

  it("a code works for 10 minutes only", async () => {
    const client = await registerClient(server, { client_name: "Probe", redirect_uris: [redirectUrl] })
    const browser = new Browser(authorizationUrl(server, client.body.client_id, "/api/v1/orgs/other/mcp", pkcePair().challenge))
    await browser.open()
    const before = await mailIds(server, "bob@example.com")
    await browser.post({ step: "email", email: "bob@example.com" })
    const code = await newCode(server, "bob@example.com", before)
    server.clock.advance(10 * 60_000)
    const late = await browser.post({ step: "code", email: "bob@example.com", code: code! })
    expect(late.status).toBe(400)
    expect(late.html).toContain("That code did not work")
  })

  it("a form without the CSRF token is refused before anything happens", async () => {
    const client = await registerClient(server, { client_name: "Probe", redirect_uris: [redirectUrl] })
    const browser = new Browser(authorizationUrl(server, client.body.client_id, "/mcp", pkcePair().challenge))
    await browser.open()
    const before = await mailCount(server, "ada@example.com")
    expect((await browser.post({ step: "email", email: "ada@example.com" }, "forged")).status).toBe(403)
    expect(await mailCount(server, "ada@example.com")).toBe(before)
  })

  it("follows the trial rules: a trial workspace connects, runs are not allowed", async () => {
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.createOrganization({ slug: "trialco", plan: "trial", gates: ["mcp"] })))
    await server.addMember("tia@example.com", "member", "trialco")
    const made = await codeByHand(server, "/api/v1/orgs/trialco/mcp", { email: "tia@example.com" })
    const tokens = (await exchange(server, made)).body
    expect((await initializeWith(server, "/api/v1/orgs/trialco/mcp", tokens.access_token)).status).toBe(200)
    const { client } = await connectSignedIn(server, "/api/v1/orgs/trialco/mcp", { email: "tia@example.com" })
    const who = (await call(client, "whoami")).body
    expect(who.runsAllowed).toBe(false)
    await client.close()
  })

  it("the mcp gate switched off refuses a signed-in connection as it refuses personal keys (403 api_disabled)", async () => {
    await server.createOrganization("smallco", "pro")
    await server.addMember("sam@example.com", "member", "smallco")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("smallco", { enable: ["mcp"] })))
    const made = await codeByHand(server, "/mcp", { email: "sam@example.com" })
    const tokens = (await exchange(server, made)).body
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("smallco", { disable: ["mcp"] })))
    const refused = await initializeWith(server, "/mcp", tokens.access_token)
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as any).error.code).toBe("api_disabled")
  })
})

describe("keys beside sign-in", () => {
  it("organization keys are still refused at both addresses (403 insufficient_scope)", async () => {
    for (const path of ["/mcp", "/api/v1/orgs/default/mcp"]) {
      const refused = await initializeWith(server, path, server.key)
      expect(refused.status).toBe(403)
      expect(((await refused.json()) as any).error.code).toBe("insufficient_scope")
    }
  })
})

describe("discovery, registration and the authorization request", () => {
  it("serves the protected-resource metadata of both addresses and the authorization server metadata", async () => {
    for (const path of ["/mcp", "/api/v1/orgs/acme/mcp"]) {
      const metadata = await (await fetch(new URL(`/.well-known/oauth-protected-resource${path}`, server.origin))).json()
      expect(metadata).toMatchObject({ resource: `${server.origin}${path}`, authorization_servers: [server.origin] })
    }
    const as = await (await fetch(new URL("/.well-known/oauth-authorization-server", server.origin))).json()
    expect(as).toMatchObject({
      issuer: server.origin,
      authorization_endpoint: `${server.origin}/oauth/authorize`,
      token_endpoint: `${server.origin}/oauth/token`,
      registration_endpoint: `${server.origin}/oauth/register`,
      revocation_endpoint: `${server.origin}/oauth/revoke`,
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"]
    })
  })

  it("registers public clients with https or loopback http redirect URIs only", async () => {
    const ok = await registerClient(server, { client_name: "Desk", redirect_uris: ["https://client.example/cb", "http://localhost:3000/cb"], token_endpoint_auth_method: "client_secret_basic" })
    expect(ok.status).toBe(201)
    expect(ok.body).toMatchObject({ client_id: expect.any(String), client_name: "Desk", token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] })
    expect(ok.body.client_secret).toBeUndefined()
    for (const uris of [["http://client.example/cb"], [], ["https://client.example/cb#frag"], ["not a url"]]) {
      const refused = await registerClient(server, { client_name: "Bad", redirect_uris: uris })
      expect(refused.status, JSON.stringify(uris)).toBe(400)
      expect(["invalid_redirect_uri", "invalid_client_metadata"]).toContain(refused.body.error)
    }
  })

  it("shows an error page for an unknown client or an unregistered redirect URI, and sends other problems back to the client", async () => {
    const client = await registerClient(server, { client_name: "Probe", redirect_uris: [redirectUrl] })
    const { challenge } = pkcePair()
    const unknown = await fetch(authorizationUrl(server, "nope", "/mcp", challenge), { redirect: "manual" })
    expect(unknown.status).toBe(400)
    expect(await unknown.text()).toContain("Unknown client")
    const elsewhere = await fetch(authorizationUrl(server, client.body.client_id, "/mcp", challenge, { redirect_uri: "https://evil.example/cb" }), { redirect: "manual" })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.headers.get("location")).toBeNull()
    for (const [extra, error] of [
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ resource: "https://elsewhere.example/mcp" }, "invalid_target"]
    ] as const) {
      const back = await fetch(authorizationUrl(server, client.body.client_id, "/mcp", challenge, extra), { redirect: "manual" })
      expect(back.status).toBe(303)
      const location = new URL(back.headers.get("location")!)
      expect(location.origin + location.pathname).toBe(redirectUrl)
      expect(location.searchParams.get("error")).toBe(error)
      expect(location.searchParams.get("state")).toBe("s1")
    }
  })

  it("the workspace page of a member of several organizations lists exactly theirs", async () => {
    const client = await registerClient(server, { client_name: "Probe", redirect_uris: [redirectUrl] })
    const browser = new Browser(authorizationUrl(server, client.body.client_id, "/mcp", pkcePair().challenge))
    await browser.open()
    const before = await server.admin(Effect.flatMap(Outbox, (outbox) => outbox.list({ to: "ada@example.com" })))
    await browser.post({ step: "email", email: "ada@example.com" })
    const mails = (await server.admin(Effect.flatMap(Outbox, (outbox) => outbox.list({ to: "ada@example.com" })))).filter((m) => !before.some((b) => b.id === m.id))
    const code = /\b(\d{6})\b/.exec(mails[0]!.body)![1]!
    const page = await browser.post({ step: "code", email: "ada@example.com", code })
    expect(page.status).toBe(200)
    expect(workspaceOptions(page.html).map((option) => option.slug)).toEqual(["acme", "zeta"])
    expect(page.html).not.toContain("other")
    const cancelled = await browser.post({ step: "deny" })
    expect(new URL(cancelled.location!).searchParams.get("error")).toBe("access_denied")
  })
})
