/**
 * Origin validation on the Portal's pages (issue 23; `server/http/origin-guard.ts`), over real
 * sockets: a form posted from another origin, with a valid CSRF token and cookie, is refused with
 * the Portal's plain 403 page and sends no code; a page asked under a foreign `Host` (DNS
 * rebinding) is refused the same way; the server's own origin and loopback origins are served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sendWithHeaders } from "../support/header-request.js"
import { sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPortal, emailsTo, endUser, PortalClient } from "./support.js"

let server: TestServer
let portal: string

const codeRows = async () => Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM portal_codes`))[0]!.n)

beforeAll(async () => {
  server = await startTestServer()
  portal = await createPortal(server, "Members area")
  await endUser(server, "ana@example.com")
})
afterAll(() => server.stop())

const expectRefusalPage = (status: number, type: string | null, text: string, reason: string) => {
  expect(status).toBe(403)
  expect(type).toBe("text/html; charset=utf-8")
  expect(text).toContain("<title>Not allowed from there</title>")
  expect(text).toContain(`<h1>Not allowed from there</h1><p>${reason}</p><p>Nothing was done.</p>`)
}

describe("Origin on the Portal", () => {
  it("refuses a sign-in form posted from another origin, or from an opaque one, with a page; no code is made or sent", async () => {
    const client = new PortalClient(server, portal)
    await client.get()
    for (const origin of ["http://evil.example", "null"]) {
      const refused = await client.send("POST", "sign-in", { csrf_token: client.csrf, email: "ana@example.com" }, { origin })
      expectRefusalPage(
        refused.status,
        refused.headers.get("content-type"),
        refused.text,
        `Requests from the origin ${origin} are not allowed here; the server takes them from loopback origins, its own origin and those listed with svc serve --allowed-origins.`
      )
      expect(refused.headers.get("x-frame-options")).toBe("DENY")
      expect(refused.headers.get("access-control-allow-origin")).toBeNull()
    }
    expect(await codeRows()).toBe(0)
    expect(await emailsTo(server, "ana@example.com")).toEqual([])

    // The same form from the server's own origin (a browser's own post) is served: the code is sent.
    await client.get()
    const served = await client.send("POST", "sign-in", { csrf_token: client.csrf, email: "ana@example.com" }, { origin: server.origin })
    expect(served.status).toBe(200)
    expect(await codeRows()).toBe(1)
    expect((await emailsTo(server, "ana@example.com")).map((email) => email.kind)).toEqual(["sign_in_code"])
  })

  it("serves loopback origins on any port", async () => {
    const client = new PortalClient(server, portal)
    for (const origin of ["http://localhost:5173", "http://[::1]:8080"]) {
      await client.get()
      const served = await client.send("POST", "sign-out", { csrf_token: client.csrf }, { origin })
      expect(served.status).toBe(200)
      expect(served.text).toContain("You are signed out.")
    }
  })

  it("refuses a page asked under a foreign Host (DNS rebinding), and serves it under the server's own", async () => {
    const path = `/portals/${portal}/`
    const port = new URL(server.origin).port
    const rebound = await sendWithHeaders(server.origin, "GET", path, { host: `evil.example.com:${port}` })
    expectRefusalPage(
      rebound.status,
      String(rebound.headers["content-type"]),
      rebound.text,
      "This server listens on a loopback address and is not reached as evil.example.com (a guard against DNS rebinding); to serve under that name, list its origin with svc serve --allowed-origins."
    )
    expect(rebound.headers["set-cookie"]).toBeUndefined()
    const own = await sendWithHeaders(server.origin, "GET", path, { host: `localhost:${port}` })
    expect(own.status).toBe(200)
    expect(own.text).toContain("<h1>Sign in to Members area</h1>")
  })
})
