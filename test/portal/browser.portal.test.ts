/**
 * The Portal in a real browser: a system `chromium` (Debian's package; `.ci/run` installs it) driven
 * by `playwright-core`, which downloads no browser. Sign in with email and the code from the outbox,
 * see the granted App, send a message and see the streamed reply appear on the same page (the inline
 * script, not a page load). On a machine without chromium (issue 20, a bare machine) the suite does
 * not start: its one test prints a line saying so and why, and checks that no chromium is there.
 */
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findChromium } from "../support/chromium.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { admit, createPortal, endUser, grant, latestCode, plan, pools, publishedApp, subscribe } from "./support.js"

const chromiumPath = findChromium()

if (chromiumPath !== undefined) {
  describe("the Portal in chromium", () => {
    let server: TestServer
    let browser: Browser
    let portal: string
    let desk: string
    let subscription: string

    beforeAll(async () => {
      server = await startTestServer({ server: { model: {}, runs: { keepAliveMs: 100 } } })
      portal = await createPortal(server, "Browser portal")
      desk = await publishedApp(server, "Browser desk", "Answers in the browser")
      const made = await plan(server, "Basic", 10)
      await grant(server, made.groupId, desk)
      await admit(server, portal, made.groupId)
      const id = await endUser(server, "web@example.com", "pending")
      subscription = await subscribe(server, id, made.id, { allowance: 5, bonus: 1 })
      browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] })
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await server.stop()
    })

    it("signs in with a code, lists the App and streams a reply in place", async () => {
      const page = await browser.newPage()
      await page.goto(`${server.origin}/portals/${portal}/`)
      await page.getByLabel("Email address").fill("web@example.com")
      await page.getByRole("button", { name: "Send me a code" }).click()
      await expect(page.getByRole("heading", { name: "Enter your code" }).isVisible()).resolves.toBe(true)
      const code = (await latestCode(server, "web@example.com"))!
      await page.getByLabel(/6-digit code/).fill(code)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("heading", { name: "Your Apps" }).waitFor()
      expect(await page.getByRole("link").allTextContents()).toEqual(["Browser desk"])
      await page.getByRole("link", { name: "Browser desk" }).click()
      await page.getByRole("heading", { name: "Browser desk" }).waitFor()
      let loads = 0
      page.on("load", () => void loads++)
      await page.getByLabel("Your message").fill("Hello from the browser")
      await page.getByRole("button", { name: "Send" }).click()
      const reply = page.locator(".message.assistant .reply")
      await reply.waitFor()
      await expect.poll(() => reply.textContent(), { timeout: 10_000 }).toMatch(/Knowledgebase/)
      expect(await page.locator(".message.user span").textContent()).toBe("Hello from the browser")
      expect(loads).toBe(0)
      expect(await page.locator('input[name="conversation_id"]').inputValue()).toMatch(/^[0-9a-f-]{36}$/)
      expect(await pools(server, subscription)).toEqual({ credits_used: 0, bonus_credits: 0 })
    }, 60_000)
  })
} else {
  describe("the Portal in chromium", () => {
    it("does not run without chromium, and says so", () => {
      console.log("portal browser test not run: no chromium on this machine (apt-get install chromium)")
      expect(findChromium()).toBeUndefined()
    })
  })
}
