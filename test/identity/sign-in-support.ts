/**
 * MCP sign-in test helpers: a browser stand-in that walks the authorization pages over HTTP (the
 * CSRF cookie and field, the email, the code read from the outbox, the workspace choice, the
 * redirect), and an `OAuthClientProvider` for the MCP SDK whose `redirectToAuthorization` uses it.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { Effect } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { expect } from "vitest"
import { Outbox } from "../../server/provisioning/outbox/service.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { AccountsService } from "../../server/identity/service.js"

/** A test server with organization `acme`, its `mcp` gate on, and `members` in it with the role member. */
export const startSignInServer = async (members: ReadonlyArray<string> = ["ada@example.com"], options?: Parameters<typeof startTestServer>[0]): Promise<TestServer> => {
  const server = await startTestServer(options)
  await server.createOrganization("acme")
  await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("acme", { enable: ["mcp"] })))
  for (const email of members) await server.addMember(email, "member", "acme")
  return server
}

/** Where the test client says it wants the code sent (never requested: the helper reads the redirect). */
export const redirectUrl = "http://127.0.0.1:9/callback"

/** A page as the browser stand-in saw it. */
export interface Visit {
  readonly status: number
  readonly html: string
  readonly location: string | null
}

/** How the browser stand-in signs in. */
export interface SignInPlan {
  readonly email: string
  /** The workspace (slug) to choose when the page asks; the first offered when absent. */
  readonly workspace?: string
  /** Called with the workspace page's options (slugs), when it is shown. */
  readonly onChoice?: (slugs: ReadonlyArray<string>) => void
}

const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? ""

const mailsTo = (server: TestServer, email: string) => server.admin(Effect.flatMap(Outbox, (outbox) => outbox.list({ to: email })))

/** The ids of the emails sent to `email` so far. */
export const mailIds = async (server: TestServer, email: string): Promise<Set<string>> => new Set((await mailsTo(server, email)).map((mail) => mail.id))

/** The code of the one email sent to `email` that is not among `before`, or null (the test clock may stand still, so times do not order them). */
export const newCode = async (server: TestServer, email: string, before: ReadonlySet<string>): Promise<string | null> => {
  const fresh = (await mailsTo(server, email)).filter((mail) => !before.has(mail.id))
  expect(fresh.length).toBeLessThanOrEqual(1)
  return fresh[0] === undefined ? null : (/\b(\d{6})\b/.exec(fresh[0].body)?.[1] ?? null)
}

/** How many emails went to `email`. */
export const mailCount = async (server: TestServer, email: string): Promise<number> => (await mailsTo(server, email)).length

/** A cookie-keeping browser stand-in on one authorization URL. */
export class Browser {
  private cookie = ""
  private csrf = ""

  constructor(readonly authorizationUrl: URL) {}

  /** Opens the authorization page. */
  async open(): Promise<Visit> {
    const response = await fetch(this.authorizationUrl, { redirect: "manual" })
    return this.read(response)
  }

  /** Posts a form step to the authorization URL. */
  async post(fields: Record<string, string>, csrf = this.csrf): Promise<Visit> {
    const response = await fetch(this.authorizationUrl, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: this.cookie },
      body: new URLSearchParams({ csrf_token: csrf, ...fields })
    })
    return this.read(response)
  }

  private async read(response: Response): Promise<Visit> {
    const set = response.headers.get("set-cookie")
    if (set !== null) this.cookie = set.split(";")[0]!
    const html = await response.text()
    const token = csrfOf(html)
    if (token !== "") this.csrf = token
    return { status: response.status, html, location: response.headers.get("location") }
  }
}

/** The workspace options of a workspace page: member id and slug. */
export const workspaceOptions = (html: string): Array<{ memberId: string; slug: string }> =>
  [...html.matchAll(/<input type="radio" name="member" value="([^"]+)"[^>]*> [^<]* \(([^)]+)\)<\/label>/g)].map((m) => ({ memberId: m[1]!, slug: m[2]! }))

/** Walks the pages from the authorization URL to the redirect; answers the redirect URL. */
export const signIn = async (server: TestServer, authorizationUrl: URL, plan: SignInPlan): Promise<URL> => {
  const browser = new Browser(authorizationUrl)
  expect((await browser.open()).status).toBe(200)
  const before = await mailIds(server, plan.email)
  expect((await browser.post({ step: "email", email: plan.email })).status).toBe(200)
  const code = await newCode(server, plan.email, before)
  expect(code).not.toBeNull()
  let visit = await browser.post({ step: "code", email: plan.email, code: code! })
  if (visit.status === 200) {
    const options = workspaceOptions(visit.html)
    plan.onChoice?.(options.map((option) => option.slug))
    const chosen = options.find((option) => option.slug === (plan.workspace ?? options[0]?.slug))
    expect(chosen).toBeDefined()
    visit = await browser.post({ step: "workspace", ticket: /name="ticket" value="([^"]+)"/.exec(visit.html)![1]!, member: chosen!.memberId })
  }
  expect(visit.status).toBe(303)
  return new URL(visit.location!)
}

/** An OAuth client provider kept in memory whose browser is the stand-in above. */
export class TestOAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  /** The authorization code the last redirect carried. */
  code: string | null = null
  /** The authorization URLs the SDK sent the "browser" to. */
  readonly authorizations: Array<URL> = []
  /** When false, a redirect to the authorization page is only recorded (a person who does not sign in again). */
  browse = true

  constructor(
    private readonly server: TestServer,
    private readonly plan: SignInPlan
  ) {}

  get redirectUrl() {
    return redirectUrl
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Test MCP client", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }
  }
  state() {
    return "state-1234"
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
  async redirectToAuthorization(url: URL) {
    this.authorizations.push(url)
    if (!this.browse) return
    const back = await signIn(this.server, url, this.plan)
    expect(back.searchParams.get("state")).toBe("state-1234")
    this.code = back.searchParams.get("code")
  }
}

/** Signs in through the SDK's auth flow at `path` and answers a connected client with its provider. */
export const connectSignedIn = async (server: TestServer, path: string, plan: SignInPlan) => {
  const url = new URL(path, server.origin)
  const provider = new TestOAuthProvider(server, plan)
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
  await expect(new Client({ name: "svc-test", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
  expect(provider.code).not.toBeNull()
  await first.finishAuth(provider.code!)
  const client = new Client({ name: "svc-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
  return { client, provider }
}

/** A raw MCP initialize POST with a bearer token; answers the response. */
export const initializeWith = (server: TestServer, path: string, token: string) =>
  fetch(new URL(path, server.origin), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
  })

/** A token endpoint request with form parameters. */
export const tokenRequest = async (server: TestServer, params: Record<string, string>) => {
  const response = await fetch(new URL("/oauth/token", server.origin), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params)
  })
  return { status: response.status, body: (await response.json()) as any }
}

/** Registers a client by RFC 7591; answers the response status and body. */
export const registerClient = async (server: TestServer, metadata: Record<string, unknown>) => {
  const response = await fetch(new URL("/oauth/register", server.origin), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(metadata)
  })
  return { status: response.status, body: (await response.json()) as any }
}

/** A PKCE verifier and its S256 challenge. */
export const pkcePair = (verifier = `verifier-${randomUUID()}-${randomUUID()}`) => ({
  verifier,
  challenge: createHash("sha256").update(verifier).digest("base64url")
})

/** The authorization URL of a request by `clientId` for the MCP address `path`. */
export const authorizationUrl = (server: TestServer, clientId: string, path: string, challenge: string, extra: Record<string, string> = {}) => {
  const url = new URL("/oauth/authorize", server.origin)
  for (const [name, value] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUrl,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
    resource: new URL(path, server.origin).href,
    ...extra
  })) {
    url.searchParams.set(name, value)
  }
  return url
}

/** A registered client and an authorization code for `email` at `path`, by hand (no SDK). */
export const codeByHand = async (server: TestServer, path: string, plan: SignInPlan) => {
  const client = await registerClient(server, { client_name: "Hand client", redirect_uris: [redirectUrl] })
  expect(client.status).toBe(201)
  const pkce = pkcePair()
  const back = await signIn(server, authorizationUrl(server, client.body.client_id, path, pkce.challenge), plan)
  return { clientId: client.body.client_id as string, verifier: pkce.verifier, code: back.searchParams.get("code")! }
}

/** Exchanges a code made by `codeByHand` for tokens; answers the token response. */
export const exchange = (server: TestServer, made: { clientId: string; verifier: string; code: string }, overrides: Record<string, string> = {}) =>
  tokenRequest(server, { grant_type: "authorization_code", client_id: made.clientId, code: made.code, code_verifier: made.verifier, redirect_uri: redirectUrl, ...overrides })
