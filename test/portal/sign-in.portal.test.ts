/**
 * Sign-in at a Portal over HTTP on a real server: the code flow (a code in the outbox, wrong codes,
 * five tries then refused, expiry on the test clock, reuse refused), one neutral answer for unknown,
 * revoked and deleted addresses with no code written, pending identities made active, CSRF refused
 * without the token, the cookies' attributes, sign-out, a revoked person's session refused, and an
 * unknown Portal's plain 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPortal, emailsTo, endUser, latestCode, PortalClient } from "./support.js"

let server: TestServer
let portal: string
const neutral = "If this address may sign in here, we sent it a code."
const wrong = "That code did not work."

const stateOf = async (id: string) => (await sql(server, (db) => db<{ state: string }>`SELECT state FROM end_users WHERE id = ${id}`))[0]!.state
const codeRows = async () => Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM portal_codes`))[0]!.n)
const sessionRows = async () => Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM portal_sessions`))[0]!.n)

beforeAll(async () => {
  server = await startTestServer()
  portal = await createPortal(server, "Members area")
})
afterAll(async () => {
  await server.stop()
})

describe("the code flow", () => {
  it("sends a 6-digit code through the outbox, stored hashed, and signs in with it once", async () => {
    await endUser(server, "ana@example.com")
    const client = new PortalClient(server, portal)
    const page = await client.get()
    expect(page.status).toBe(200)
    expect(page.text).toContain("<h1>Sign in to Members area</h1>")
    expect(page.text).toContain('autocomplete="email"')
    expect(page.text).not.toContain(`type="password"`)
    const asked = await client.post("sign-in", { email: "Ana@Example.com " })
    expect(asked.status).toBe(200)
    expect(asked.text).toContain(neutral)
    expect(asked.text).toContain('autocomplete="one-time-code"')
    expect(asked.text).toContain('inputmode="numeric"')
    const code = await latestCode(server, "ana@example.com")
    expect(code).toMatch(/^\d{6}$/)
    const stored = await sql(server, (db) => db<{ code_hash: string }>`SELECT code_hash FROM portal_codes`)
    expect(stored.map((row) => row.code_hash)).not.toContain(code)
    expect(stored[0]!.code_hash).toMatch(/^[0-9a-f]{64}$/)

    const signedIn = await client.post("verify", { email: "ana@example.com", code: code! })
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get("location")).toBe(`/portals/${portal}/`)
    const home = await client.get()
    expect(home.text).toContain("Signed in as ana@example.com")

    const again = new PortalClient(server, portal)
    await again.get()
    const reused = await again.post("verify", { email: "ana@example.com", code: code! })
    expect(reused.status).toBe(400)
    expect(reused.text).toContain(wrong)
    expect(reused.text).toContain('aria-describedby="code-error"')
    expect(again.cookies.has("svc_portal_session")).toBe(false)
  })

  it("refuses wrong codes, and after five tries refuses the right one too", async () => {
    await endUser(server, "ben@example.com")
    const client = new PortalClient(server, portal)
    await client.requestCode("ben@example.com")
    const code = (await latestCode(server, "ben@example.com"))!
    const wrongCode = code === "000000" ? "111111" : "000000"
    for (let i = 0; i < 5; i++) expect((await client.post("verify", { email: "ben@example.com", code: wrongCode })).status).toBe(400)
    const right = await client.post("verify", { email: "ben@example.com", code })
    expect(right.status).toBe(400)
    expect(right.text).toContain(wrong)
    expect(client.cookies.has("svc_portal_session")).toBe(false)
    await client.post("sign-in", { email: "ben@example.com" })
    const fresh = (await latestCode(server, "ben@example.com"))!
    expect((await client.post("verify", { email: "ben@example.com", code: fresh })).status).toBe(303)
  })

  it("accepts a code for ten minutes only, and only the newest", async () => {
    await endUser(server, "cy@example.com")
    const client = new PortalClient(server, portal)
    await client.requestCode("cy@example.com")
    const first = (await latestCode(server, "cy@example.com"))!
    await client.post("sign-in", { email: "cy@example.com" })
    const second = (await latestCode(server, "cy@example.com"))!
    if (first !== second) expect((await client.post("verify", { email: "cy@example.com", code: first })).status).toBe(400)
    server.clock.advance(10 * 60_000 + 1)
    expect((await client.post("verify", { email: "cy@example.com", code: second })).status).toBe(400)
    await client.post("sign-in", { email: "cy@example.com" })
    const third = (await latestCode(server, "cy@example.com"))!
    server.clock.advance(9 * 60_000)
    expect((await client.post("verify", { email: "cy@example.com", code: third })).status).toBe(303)
  })
})

describe("who may sign in", () => {
  it("answers unknown, revoked and deleted addresses exactly like an allowed one, and writes no code for them", async () => {
    await endUser(server, "dee@example.com")
    await endUser(server, "gone@example.com", "revoked")
    await endUser(server, "erased@example.com", "deleted")
    const pages: Array<string> = []
    for (const email of ["dee@example.com", "nobody@example.com", "gone@example.com", "erased@example.com"]) {
      const client = new PortalClient(server, portal)
      await client.get()
      const before = await codeRows()
      const answer = await client.post("sign-in", { email })
      expect(answer.status).toBe(200)
      pages.push(answer.text.replace(/value="[^"]*"/g, "").replaceAll(email, "EMAIL"))
      expect(await codeRows()).toBe(before + (email === "dee@example.com" ? 1 : 0))
    }
    expect(new Set(pages).size).toBe(1)
    expect(await emailsTo(server, "nobody@example.com")).toEqual([])
    expect(await emailsTo(server, "erased@example.com")).toEqual([])
    const revoked = await emailsTo(server, "gone@example.com")
    expect(revoked.map((email) => email.kind)).toEqual(["sign_in_refused"])
    expect(revoked[0]!.body).toContain("revoked")
    expect(revoked[0]!.body).not.toMatch(/\b\d{6}\b/)
  })

  it("sends at most five codes per ten minutes and one revocation notice an hour, answering neutrally all the same", async () => {
    await endUser(server, "flo@example.com")
    await endUser(server, "cut@example.com", "revoked")
    const client = new PortalClient(server, portal)
    await client.get()
    for (let i = 0; i < 7; i++) {
      expect((await client.post("sign-in", { email: "flo@example.com" })).text).toContain(neutral)
      expect((await client.post("sign-in", { email: "cut@example.com" })).text).toContain(neutral)
    }
    const kinds = async (email: string) => (await emailsTo(server, email)).map((email) => email.kind)
    expect(await kinds("flo@example.com")).toEqual(Array(5).fill("sign_in_code"))
    expect(await kinds("cut@example.com")).toEqual(["sign_in_refused"])
    server.clock.advance(60 * 60_000 + 1)
    await client.post("sign-in", { email: "flo@example.com" })
    await client.post("sign-in", { email: "cut@example.com" })
    expect(await kinds("flo@example.com")).toHaveLength(6)
    expect(await kinds("cut@example.com")).toEqual(["sign_in_refused", "sign_in_refused"])
    const code = (await latestCode(server, "flo@example.com"))!
    expect((await client.post("verify", { email: "flo@example.com", code })).status).toBe(303)
  })

  it("makes a pending identity active at its first sign-in", async () => {
    const id = await endUser(server, "pat@example.com", "pending")
    const client = new PortalClient(server, portal)
    expect((await client.signIn("pat@example.com")).status).toBe(303)
    expect(await stateOf(id)).toBe("active")
  })

  it("ends a revoked person's session on the next request", async () => {
    const id = await endUser(server, "rex@example.com")
    const client = new PortalClient(server, portal)
    await client.signIn("rex@example.com")
    expect((await client.get()).text).toContain("Signed in as rex@example.com")
    await sql(server, (db) => db`UPDATE end_users SET state = 'revoked' WHERE id = ${id}`)
    const after = await client.get()
    expect(after.text).not.toContain("Signed in as")
    expect(after.text).toContain("Your session has ended.")
    expect(client.cookies.has("svc_portal_session")).toBe(false)
  })
})

describe("sessions and forms", () => {
  it("sets HttpOnly, SameSite=Lax cookies on the Portal's path, Secure only over https", async () => {
    await endUser(server, "sue@example.com")
    const client = new PortalClient(server, portal)
    await client.requestCode("sue@example.com")
    const code = (await latestCode(server, "sue@example.com"))!
    const signedIn = await client.post("verify", { email: "sue@example.com", code })
    const session = signedIn.headers.getSetCookie().find((line) => line.startsWith("svc_portal_session="))!
    expect(session).toMatch(/HttpOnly/)
    expect(session).toMatch(/SameSite=Lax/)
    expect(session).toContain(`Path=/portals/${portal}/`)
    expect(session).toMatch(/Max-Age=604800/)
    expect(session).not.toMatch(/Secure/)
    const token = session.split(";")[0]!.split("=")[1]!
    expect(token.length).toBeGreaterThanOrEqual(43)
    const hashes = await sql(server, (db) => db<{ token_hash: string }>`SELECT token_hash FROM portal_sessions`)
    expect(hashes.map((row) => row.token_hash)).not.toContain(token)

    const https = await fetch(`${server.origin}/portals/${portal}/`, { headers: { "x-forwarded-proto": "https" } })
    expect(https.headers.getSetCookie().find((line) => line.startsWith("svc_portal_csrf="))).toMatch(/; Secure/)
  })

  it("refuses every form without the CSRF token, changing nothing", async () => {
    await endUser(server, "tom@example.com")
    const client = new PortalClient(server, portal)
    await client.get()
    const codes = await codeRows()
    const missing = await client.send("POST", "sign-in", { email: "tom@example.com" })
    expect(missing.status).toBe(403)
    const forged = await client.send("POST", "sign-in", { email: "tom@example.com", csrf_token: "x".repeat(32) })
    expect(forged.status).toBe(403)
    expect(await codeRows()).toBe(codes)
    expect(await emailsTo(server, "tom@example.com")).toEqual([])

    await client.signIn("tom@example.com")
    const sessions = await sessionRows()
    const outWithout = await client.send("POST", "sign-out", {})
    expect(outWithout.status).toBe(403)
    expect((await client.get()).text).toContain("Signed in as tom@example.com")
    expect(await sessionRows()).toBe(sessions)
  })

  it("ends a session after its seven days", async () => {
    await endUser(server, "val@example.com")
    const client = new PortalClient(server, portal)
    await client.signIn("val@example.com")
    server.clock.advance(7 * 24 * 60 * 60_000 - 1_000)
    expect((await client.get()).text).toContain("Signed in as val@example.com")
    server.clock.advance(2_000)
    expect((await client.get()).text).toContain("Your session has ended.")
  })

  it("answers a code for an address that may not sign in exactly like a wrong code", async () => {
    const client = new PortalClient(server, portal)
    await client.get()
    const unknown = await client.post("verify", { email: "stranger@example.com", code: "123456" })
    expect(unknown.status).toBe(400)
    expect(unknown.text).toContain(wrong)
    expect(client.cookies.has("svc_portal_session")).toBe(false)
  })

  it("signs out: the session ends on the server and the cookie is removed", async () => {
    await endUser(server, "uma@example.com")
    const client = new PortalClient(server, portal)
    await client.signIn("uma@example.com")
    const cookie = client.cookies.get("svc_portal_session")!
    await client.get()
    const out = await client.post("sign-out")
    expect(out.status).toBe(200)
    expect(out.text).toContain("You are signed out.")
    expect(client.cookies.has("svc_portal_session")).toBe(false)
    client.cookies.set("svc_portal_session", cookie)
    expect((await client.get()).text).not.toContain("Signed in as")
  })

  it("answers an unknown Portal with a plain 404 page", async () => {
    const response = await fetch(`${server.origin}/portals/00000000-0000-4000-8000-000000000000/`)
    expect(response.status).toBe(404)
    expect(response.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await response.text()).toContain("<h1>Not found</h1>")
  })
})
