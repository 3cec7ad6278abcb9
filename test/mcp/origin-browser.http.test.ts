/**
 * Origin and CORS in a real browser (issue 23): a system chromium driven by playwright-core, as the
 * Portal's browser test. A web client at a loopback origin calls `/mcp` across origins (preflight,
 * then the call) and reads `Mcp-Session-Id` and `WWW-Authenticate`; one at another origin cannot;
 * a page reached under a rebound name (`evil.test`, made to resolve to 127.0.0.1) is refused, and
 * so is its same-origin call to `/mcp`; the sign-in page's own form post carries the server's
 * origin (its Referrer-Policy is `same-origin`: with `no-referrer` chromium would send
 * `Origin: null`) and is served. Without chromium the suite says so and passes, as the Portal's.
 */
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findChromium } from "../support/chromium.js"
import { personalKey } from "../support/mcp.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { startWebServer, type WebServer } from "../support/web-server.js"
import { authorizationUrl, pkcePair, registerClient } from "../identity/sign-in-support.js"

const chromiumPath = findChromium()

/** What a page's `fetch` of an MCP address came to: the status and the headers it could read, or the error. */
interface Fetched {
  readonly status?: number
  readonly sessionId?: string | null
  readonly challenge?: string | null
  readonly error?: string
}

/** From inside `page`, POSTs an MCP initialize to `url` (with `key` when given), as a browser MCP client does. */
const initializeFrom = (page: Page, url: string, key: string | null): Promise<Fetched> =>
  page.evaluate(
    async ({ url, key }) => {
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
            ...(key === null ? {} : { authorization: `Bearer ${key}` })
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "web", version: "1" } } })
        })
        return { status: response.status, sessionId: response.headers.get("mcp-session-id"), challenge: response.headers.get("www-authenticate") }
      } catch (error) {
        return { error: String(error) }
      }
    },
    { url, key }
  )

if (chromiumPath !== undefined) {
  describe("Origin and CORS in chromium", () => {
    let server: TestServer
    let web: WebServer
    let browser: Browser
    let key: string

    beforeAll(async () => {
      server = await startTestServer()
      key = await personalKey(server, "web@example.com", "admin")
      web = await startWebServer((_request, response) => void response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>web client</title>"))
      browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--host-resolver-rules=MAP evil.test 127.0.0.1"] })
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await web?.close()
      await server?.stop()
    })

    it("a web client at a loopback origin connects across origins and reads Mcp-Session-Id and WWW-Authenticate", async () => {
      const page = await browser.newPage()
      await page.goto(`${web.origin}/`)
      const connected = await initializeFrom(page, `${server.origin}/mcp`, key)
      expect(connected.status).toBe(200)
      expect(connected.sessionId).toMatch(/\S/)
      const unauthorized = await initializeFrom(page, `${server.origin}/mcp`, null)
      expect(unauthorized).toEqual({ status: 401, sessionId: null, challenge: `Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp"` })
      await page.close()
    }, 30_000)

    it("a web client at another origin cannot call /mcp: the preflight is refused", async () => {
      const page = await browser.newPage()
      await page.goto(`http://evil.test:${web.port}/`)
      const refused = await initializeFrom(page, `${server.origin}/mcp`, key)
      expect(refused.error).toMatch(/TypeError: Failed to fetch/)
      await page.close()
    }, 30_000)

    it("a page under a rebound name is refused, and so is its same-origin call to /mcp", async () => {
      const page = await browser.newPage()
      const port = new URL(server.origin).port
      const landed = await page.goto(`http://evil.test:${port}/mcp`)
      expect(landed?.status()).toBe(403)
      const rebound = await initializeFrom(page, "/mcp", key)
      expect(rebound).toEqual({ status: 403, sessionId: null, challenge: null })
      await page.close()
    }, 30_000)

    it("the sign-in page's own form post carries the server's origin and is served", async () => {
      const registered = await registerClient(server, { client_name: "Browser client", redirect_uris: ["http://127.0.0.1:9/callback"] })
      expect(registered.status).toBe(201)
      const page = await browser.newPage()
      const origins: Array<string | undefined> = []
      page.on("request", (request) => {
        if (request.method() === "POST") void request.allHeaders().then((headers) => origins.push(headers["origin"]))
      })
      await page.goto(authorizationUrl(server, registered.body.client_id, "/mcp", pkcePair().challenge).href)
      await page.getByLabel("Email address").fill("web@example.com")
      await page.getByRole("button", { name: "Send me a code" }).click()
      await page.getByRole("heading", { name: "Enter your code" }).waitFor()
      expect(origins).toEqual([server.origin])
      await page.close()
    }, 30_000)
  })
} else {
  describe("Origin and CORS in chromium", () => {
    it("does not run without chromium, and says so", () => {
      console.log("origin browser test not run: no chromium on this machine (apt-get install chromium)")
      expect(findChromium()).toBeUndefined()
    })
  })
}
