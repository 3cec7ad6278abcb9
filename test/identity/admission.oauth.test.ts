/**
 * The OAuth endpoints of MCP sign-in through the one admission (`server/mcp/sign-in/admission.ts`
 * on `identity/admission.ts`), over HTTP on a real server: a request naming a client that is not
 * registered (the authorization page, the token endpoint) or a redirect URI the client did not
 * register is refused with its exact answer, writes nothing and is counted by no one, even once the
 * address is over its rate; every admitted request (registration, the authorization page, a token
 * request, a revocation) is counted once against the address it came from, then 429
 * `rate_limited` with `Retry-After` and nothing written.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sql } from "../support/fixtures.js"
import { nextMinute, writtenRows } from "../support/admission.js"
import { onSqlite } from "../support/postgres.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"
import { authorizationUrl, pkcePair, redirectUrl, registerClient, tokenRequest } from "./sign-in-support.js"

const budget = 5
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ clock: new ManualClock(), server: { requestsPerMinute: budget } })
})
afterAll(() => server.stop())

/** A new minute: every bucket's window is empty again. */
const nextWindow = () => nextMinute(server)

/** The rows a request here could write, and on PostgreSQL the requests counted. */
const written = () => writtenRows(server, ["mcp_oauth_clients", "mcp_sign_in_codes", "mcp_authorization_codes", "mcp_sessions", "outbox_emails"])

const client = { client_name: "Admission client", redirect_uris: [redirectUrl] }

/** The authorization page for `clientId`. */
const authorizePage = async (clientId: string, extra: Record<string, string> = {}) => {
  const response = await fetch(authorizationUrl(server, clientId, "/mcp", pkcePair().challenge, extra), { redirect: "manual" })
  return { status: response.status, headers: response.headers, html: await response.text() }
}

const unknownCodeExchange = () =>
  tokenRequest(server, { grant_type: "authorization_code", client_id: randomUUID(), code: "some-code", code_verifier: pkcePair().verifier, redirect_uri: redirectUrl })

const unknownRefresh = () => tokenRequest(server, { grant_type: "refresh_token", client_id: randomUUID(), refresh_token: "svcmr_unknown" })

/** The refusals of a client that is not registered, or of a redirect URI the client did not register. */
const refusals = async (registeredClientId: string) => {
  const unknown = await authorizePage(randomUUID())
  expect([unknown.status, unknown.html.includes("Unknown client")]).toEqual([400, true])
  const wrongRedirect = await authorizePage(registeredClientId, { redirect_uri: "http://127.0.0.1:9/elsewhere" })
  expect([wrongRedirect.status, wrongRedirect.html.includes("Wrong redirect address")]).toEqual([400, true])
  const exchange = await unknownCodeExchange()
  expect([exchange.status, exchange.body]).toEqual([400, { error: "invalid_grant", error_description: "The authorization code is not valid for this client." }])
  const refresh = await unknownRefresh()
  expect([refresh.status, refresh.body]).toEqual([400, { error: "invalid_grant", error_description: "The refresh token is not valid for this client." }])
}

const expectRateLimited = (response: { status: number; body: any; headers?: Headers }) => {
  expect(response.status).toBe(429)
  expect(response.body.error).toBe("rate_limited")
}

describe("a refused request is not counted", () => {
  it("unknown clients and unregistered redirect URIs, ten times each: refused, nothing written; then the address's whole budget, then 429", async () => {
    nextWindow()
    const registered = await registerClient(server, client)
    expect(registered.status).toBe(201)
    const before = await written()
    for (let i = 0; i < 10; i++) await refusals(registered.body.client_id)
    expect(await written()).toEqual(before)

    for (let i = 0; i < budget - 1; i++) {
      const page = await authorizePage(registered.body.client_id)
      expect(page.status).toBe(200)
      expect(page.html).toContain('name="csrf_token"')
    }
    if (!onSqlite) {
      expect((await written()).counted).toBe(before.counted! + budget - 1)
      // Counted against the address the requests came from (the socket's peer), in a bucket of its own.
      const buckets = await sql(server, (db) => db<{ bucket: string }>`SELECT bucket FROM rate_limit_buckets WHERE bucket LIKE ${"requests:address:%"}`)
      expect(buckets.map((row) => row.bucket)).toEqual([expect.stringMatching(/^requests:address:(::ffff:)?127\.0\.0\.1$|^requests:address:::1$/)])
    }
    const over = await authorizePage(registered.body.client_id)
    expect(over.status).toBe(429)
    expect(over.html).toContain("Too many requests")
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)

    // Over the rate, a refusal is still answered as a refusal: authentication comes before the count.
    await refusals(registered.body.client_id)
  })
})

describe("an admitted request is counted once, against its address", () => {
  it("registrations, token requests and revocations share the address's budget; over it, 429 with Retry-After and nothing written", async () => {
    nextWindow()
    const first = await registerClient(server, client)
    expect(first.status).toBe(201)
    const badGrant = await tokenRequest(server, {
      grant_type: "authorization_code",
      client_id: first.body.client_id,
      code: "not-a-code",
      code_verifier: pkcePair().verifier,
      redirect_uri: redirectUrl
    })
    expect([badGrant.status, badGrant.body.error]).toEqual([400, "invalid_grant"])
    const revoked = await fetch(new URL("/oauth/revoke", server.origin), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: "svcma_unknown" })
    })
    expect(revoked.status).toBe(200)
    for (let i = 0; i < budget - 3; i++) expect((await registerClient(server, client)).status).toBe(201)
    const before = await written()

    const over = await fetch(new URL("/oauth/register", server.origin), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(client)
    })
    expect(over.status).toBe(429)
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(over.headers.get("cache-control")).toBe("no-store")
    expect(await over.json()).toEqual({ error: "rate_limited", error_description: expect.stringContaining("Too many requests from this address") })
    expectRateLimited(await tokenRequest(server, { grant_type: "refresh_token", client_id: first.body.client_id, refresh_token: "svcmr_unknown" }))
    expect(await written()).toEqual(before)

    nextWindow()
    expect((await registerClient(server, client)).status).toBe(201)
  })
})
