/**
 * The Portal through the one admission (`server/portal/admission.ts` on `identity/admission.ts`),
 * over HTTP on a real server: a request without a live session (none, an unknown cookie, an
 * expired session) is answered with the email form and is counted by no one, a POST without its
 * CSRF token gets 403 and is not counted, and nothing is written for either; a signed-in request
 * is counted once against its end user (every session of the person shares the budget, another
 * person has their own), then 429 with `Retry-After` and nothing done.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nextMinute, writtenRows } from "../support/admission.js"
import { onSqlite } from "../support/postgres.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"
import { createPortal, endUser, PortalClient, type PortalResponse } from "./support.js"

const budget = 5
let server: TestServer
let portal: string

beforeAll(async () => {
  server = await startTestServer({ clock: new ManualClock(), server: { requestsPerMinute: budget } })
  portal = await createPortal(server, "Admission area")
})
afterAll(() => server.stop())

/** A new minute: every bucket's window is empty again. */
const nextWindow = () => nextMinute(server)

/** The rows a request here could write, and on PostgreSQL the requests counted. */
const written = () => writtenRows(server, ["portal_sessions", "portal_codes", "portal_conversations", "executions", "outbox_emails"])

/** A signed-in client of `email`. */
const signedIn = async (email: string) => {
  const client = new PortalClient(server, portal)
  expect((await client.signIn(email)).status).toBe(303)
  return client
}

/** A POST with the CSRF token of the client's cookie (its last page may be one without a form). */
const postForm = (client: PortalClient, path: string, form: Record<string, string> = {}) =>
  client.send("POST", path, { csrf_token: client.cookies.get("svc_portal_csrf") ?? "", ...form })

const expectSignedOutPage = (page: PortalResponse, notice: string | null) => {
  expect(page.status).toBe(200)
  expect(page.text).toContain("<h1>Sign in to Admission area</h1>")
  expect(page.text).not.toContain("Signed in as")
  if (notice === null) expect(page.text).not.toContain('class="notice"')
  else expect(page.text).toContain(notice)
}

const expectAdmitted = (page: PortalResponse, email: string) => {
  expect(page.status).toBe(200)
  expect(page.text).toContain(`Signed in as ${email}`)
}

const expectRateLimited = (page: PortalResponse) => {
  expect(page.status).toBe(429)
  expect(page.text).toContain("<h1>Too many requests</h1>")
  expect(Number(page.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
  expect(page.text).not.toContain("Signed in as")
}

describe("a refused request is not counted", () => {
  it("no session, an unknown session cookie: the email form, nothing written, nothing counted", async () => {
    nextWindow()
    await endUser(server, "nobody-yet@example.com")
    const before = await written()
    const anonymous = new PortalClient(server, portal)
    for (let i = 0; i < 10; i++) expectSignedOutPage(await anonymous.get(), null)
    for (let i = 0; i < 10; i++) expectSignedOutPage(await anonymous.get("apps/some-app"), null)
    const forged = new PortalClient(server, portal)
    forged.cookies.set("svc_portal_session", "not-a-session")
    for (let i = 0; i < 10; i++) {
      forged.cookies.set("svc_portal_session", "not-a-session")
      const page = await forged.get()
      expectSignedOutPage(page, "Your session has ended. Sign in again.")
      expect(page.headers.getSetCookie().some((line) => line.startsWith("svc_portal_session=;") && /Max-Age=0/i.test(line))).toBe(true)
    }
    expect(await written()).toEqual(before)
  })

  it("an expired session: ten refusals (GET and POST), then the person's whole budget, then 429", async () => {
    nextWindow()
    await endUser(server, "expiring@example.com")
    const client = await signedIn("expiring@example.com")
    const stale = new Map(client.cookies)
    server.clock.advance(7 * 24 * 60 * 60_000 + 60_000)
    const before = await written()
    for (let i = 0; i < 5; i++) {
      for (const [name, value] of stale) client.cookies.set(name, value)
      expectSignedOutPage(await client.get(), "Your session has ended. Sign in again.")
    }
    for (let i = 0; i < 5; i++) {
      for (const [name, value] of stale) client.cookies.set(name, value)
      expectSignedOutPage(await postForm(client, "apps/some-app", { message: "Hello" }), "Your session has ended. Sign in again.")
    }
    expect(await written()).toEqual(before)

    expect((await client.signIn("expiring@example.com")).status).toBe(303)
    for (let i = 0; i < budget; i++) expectAdmitted(await client.get(), "expiring@example.com")
    expectRateLimited(await client.get())
  })

  it("a POST without its CSRF token: 403, the session's budget untouched", async () => {
    nextWindow()
    await endUser(server, "forms@example.com")
    const client = await signedIn("forms@example.com")
    const before = await written()
    for (let i = 0; i < 10; i++) {
      const refused = await client.send("POST", "sign-out", { csrf_token: "wrong" })
      expect(refused.status).toBe(403)
      expect(refused.text).toContain("This form has expired")
    }
    expect(await written()).toEqual(before)
    for (let i = 0; i < budget; i++) expectAdmitted(await client.get(), "forms@example.com")
    expectRateLimited(await client.get())
  })
})

describe("an admitted request is counted once, against its end user", () => {
  it("every session of one person shares the budget; another person has their own; over it, 429 and nothing done", async () => {
    nextWindow()
    await endUser(server, "twice@example.com")
    await endUser(server, "other@example.com")
    const first = await signedIn("twice@example.com")
    const second = await signedIn("twice@example.com")
    const other = await signedIn("other@example.com")
    const before = await written()
    for (let i = 0; i < budget; i++) expectAdmitted(await (i % 2 === 0 ? first : second).get(), "twice@example.com")
    if (!onSqlite) expect((await written()).counted).toBe(before.counted! + budget)
    expectRateLimited(await first.get())
    expectRateLimited(await second.get("apps/some-app"))
    expectRateLimited(await postForm(second, "apps/some-app", { message: "Hello" }))
    expectRateLimited(await postForm(first, "sign-out"))
    expect(await written()).toEqual({ ...before, ...(onSqlite ? {} : { counted: before.counted! + budget }) })
    for (let i = 0; i < budget; i++) expectAdmitted(await other.get(), "other@example.com")
    expectRateLimited(await other.get())

    nextWindow()
    expectAdmitted(await first.get(), "twice@example.com")
  })
})
