/**
 * The Portal chat draws the App's replies from their markdown as sanitized HTML (issue 21): headings,
 * bold, lists, quotes, code and links as elements; a reply's raw HTML (`<script>`, `<img onerror>`)
 * shown as text; `javascript:` and `data:` links left without an address; images dropped. The
 * same HTML on the page (no JS) and in the streamed `done` event (`reply_html`), which the page's
 * script puts in place of the streamed text: checked in chromium when the machine has it. The
 * model is a fake OpenAI-compatible server on a real socket answering a hostile markdown reply.
 */
import fc from "fast-check"
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { markdownHtml } from "../../server/portal/pages/markdown.js"
import { type FakeOpenAi, say, startFakeOpenAi } from "../support/fake-openai.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { parseFrames } from "../runtime/support.js"
import { admit, createPortal, endUser, grant, plan, PortalClient, publishedApp, subscribe } from "./support.js"

const reply = [
  "# Delivery times",
  "",
  "Orders ship in **2 days** from *Rotterdam*:",
  "",
  "- `express` lane",
  "- see [the terms](https://example.test/terms)",
  "",
  "> Quoted **warranty** text",
  "",
  '<script>window.__xss = "script"</script>',
  "",
  'Inline <img src="x" onerror="window.__xss = \'img\'"> and [click me](javascript:window.__xss=1) or [data](data:text/html,hi) ![pixel](https://tracker.test/p.png)',
  ""
].join("\n")

/** The HTML the Portal draws for `reply`, exactly. */
const replyHtml = [
  "<h1>Delivery times</h1>",
  "<p>Orders ship in <strong>2 days</strong> from <em>Rotterdam</em>:</p>",
  "<ul>",
  "<li><code>express</code> lane</li>",
  '<li>see <a href="https://example.test/terms" rel="nofollow noopener noreferrer">the terms</a></li>',
  "</ul>",
  "<blockquote>",
  "<p>Quoted <strong>warranty</strong> text</p>",
  "</blockquote>",
  "<p>&lt;script&gt;window.__xss = \"script\"&lt;/script&gt;</p>",
  '<p>Inline &lt;img src="x" onerror="window.__xss = \'img\'"&gt; and <a rel="nofollow noopener noreferrer">click me</a> or <a rel="nofollow noopener noreferrer">data</a> pixel</p>'
].join("\n")

/** Every start tag of `html` with its attribute names (sanitize-html writes every value in double quotes). */
const tagsOf = (html: string) =>
  [...html.matchAll(/<([a-z][a-z0-9]*)\b([^>]*)>/gi)].map((m) => ({ tag: m[1]!.toLowerCase(), attributes: [...m[2]!.matchAll(/\s([^\s=/]+)(?:="[^"]*")?/g)].map((a) => a[1]!.toLowerCase()) }))

describe("markdownHtml", () => {
  it("draws the reply's markdown and neutralizes its HTML, scripts, handlers and unsafe links", () => {
    expect(markdownHtml(reply).html).toBe(replyHtml)
  })

  it("keeps only allowlisted elements and attributes, whatever the markdown", () => {
    const hostile = [
      '<a href="javascript:alert(1)">raw</a> <iframe src="https://evil.test"></iframe> <svg onload="alert(1)"></svg>',
      "[x](JaVaScRiPt:alert(1)) [y](javascript&#58;alert(1)) [z](vbscript:msgbox) [w](//evil.test/path)",
      "<div onclick=\"alert(1)\">block</div>",
      "| a | b |\n|:-|-:|\n| <b onmouseover=alert(1)>1</b> | 2 |",
      "<style>body{display:none}</style>"
    ].join("\n\n")
    const html = markdownHtml(hostile).html
    const allowed: Record<string, ReadonlyArray<string>> = { a: ["rel"], th: ["align"], td: ["align"], p: [], table: [], thead: [], tbody: [], tr: [] }
    for (const { tag, attributes } of tagsOf(html)) {
      expect(Object.keys(allowed)).toContain(tag)
      expect(attributes.filter((name) => !allowed[tag]!.includes(name))).toEqual([])
    }
    expect(html).not.toMatch(/<(script|iframe|svg|style|img|div|b)\b/i)
    expect(html).toContain("&lt;iframe")
  })

  it("for any markdown, only allowlisted elements and attributes, and only http, https or mailto addresses (fast-check)", () => {
    const pieces = fc.constantFrom(
      "<script>", "</script>", "<img src=x onerror=alert(1)>", "<a href=\"javascript:alert(1)\">", "</a>", "<svg/onload=alert(1)>", "<iframe>", "<b onclick=x>",
      "[t](", "javascript:alert(1)", "JAVASCRIPT:x", "java\nscript:x", "&#106;avascript:x", "data:text/html,x", "https://ok.test", "mailto:a@b.test", ")", "![i](", "<", ">",
      "**", "*", "`", "```\n", "# ", "> ", "- ", "| a | b |\n|-|-|\n", "\n\n", " ", "word", "\"", "'", "="
    )
    const allowedAttributes: Record<string, ReadonlyArray<string>> = { a: ["href", "title", "rel"], ol: ["start"], th: ["align"], td: ["align"] }
    const allowedTags = new Set(["p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td"])
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const html = markdownHtml(parts.join("")).html
        for (const { tag, attributes } of tagsOf(html)) {
          expect(allowedTags.has(tag), `${tag} in ${html}`).toBe(true)
          expect(attributes.filter((name) => !(allowedAttributes[tag] ?? []).includes(name))).toEqual([])
        }
        for (const link of html.matchAll(/<a\b[^>]*>/g)) {
          for (const href of link[0].matchAll(/href="([^"]*)"/g)) expect(href[1]).toMatch(/^(https?:|mailto:)/)
        }
      }),
      { numRuns: 1_000 }
    )
  })
})

describe("the Portal chat over HTTP", () => {
  let fake: FakeOpenAi
  let server: TestServer
  let portal: string
  let desk: string
  let planId: string

  beforeAll(async () => {
    fake = await startFakeOpenAi(() => say(reply))
    server = await startTestServer({ server: { model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 2 }, runs: { keepAliveMs: 100 } } })
    portal = await createPortal(server, "Help centre")
    desk = await publishedApp(server, "Help desk")
    const made = await plan(server, "Basic", 10)
    planId = made.id
    await grant(server, made.groupId, desk)
    await admit(server, portal, made.groupId)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await fake?.close()
  })

  const signedIn = async (email: string) => {
    const id = await endUser(server, email)
    await subscribe(server, id, planId, { allowance: 5 })
    const client = new PortalClient(server, portal)
    await client.signIn(email)
    await client.get(`apps/${desk}`)
    return client
  }

  it("a plain form post answers the page with the reply drawn as sanitized HTML and the person's message as text", async () => {
    const client = await signedIn("md@example.com")
    const page = await client.post(`apps/${desk}`, { message: "When do you ship <b>?", conversation_id: "" })
    expect(page.status).toBe(200)
    expect(page.text).toContain(`<div class="message assistant"><strong>Help desk:</strong> <div class="reply">${replyHtml}</div></div>`)
    expect(page.text).toContain('<div class="message user"><strong>You:</strong> <span>When do you ship &lt;b&gt;?</span></div>')
    expect(page.text.match(/<script\b/g)).toHaveLength(1)
    expect(page.text).not.toContain("<img")
    expect(page.text).not.toContain("**")
  })

  it("the streamed done event carries the reply as sent and reply_html, the same HTML as the page's", async () => {
    const client = await signedIn("stream@example.com")
    const streamed = await client.send("POST", `apps/${desk}`, { message: "Ship?", conversation_id: "", csrf_token: client.csrf }, { accept: "text/event-stream" })
    expect(streamed.status).toBe(200)
    const { events } = parseFrames(streamed.text)
    const done = events.find((e) => e.event === "done")!.data
    expect(done).toMatchObject({ reply, reply_html: replyHtml, conversation_id: expect.any(String) })
    expect(events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")).toBe(reply)
    const page = await client.get(`apps/${desk}?conversation=${done.conversation_id}`)
    expect(page.text).toContain(`<div class="reply">${replyHtml}</div>`)
  })

  describe("in chromium", () => {
    const onPath = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "")
    const chromiumPath = ["/usr/bin/chromium", ...onPath.flatMap((dir) => [join(dir, "chromium"), join(dir, "chromium-browser")])].find((file) => existsSync(file))
    let browser: Browser | undefined

    afterAll(async () => {
      await browser?.close()
    })

    it("the streamed reply is replaced by the drawn HTML in place; nothing of the reply runs", async () => {
      if (chromiumPath === undefined) {
        console.log("portal markdown browser check not run: no chromium on this machine (apt-get install chromium); the HTTP checks above ran")
        return
      }
      browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] })
      const client = await signedIn("browser@example.com")
      const context = await browser.newContext()
      await context.addCookies([...client.cookies].map(([name, value]) => ({ name, value, url: server.origin })))
      const page = await context.newPage()
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => void (dialogs.push(dialog.message()), dialog.dismiss()))
      const requested: Array<string> = []
      page.on("request", (request) => void requested.push(request.url()))
      await page.goto(`${server.origin}/portals/${portal}/apps/${desk}`)
      let loads = 0
      page.on("load", () => void loads++)
      await page.getByLabel("Your message").fill("When do you ship?")
      await page.getByRole("button", { name: "Send" }).click()
      const drawn = page.locator(".message.assistant .reply")
      await drawn.locator("h1").waitFor({ timeout: 10_000 })
      expect(await drawn.innerHTML()).toBe(replyHtml)
      expect(await drawn.locator("strong").first().textContent()).toBe("2 days")
      expect(await drawn.locator("a").evaluateAll((links) => links.map((a) => (a as unknown as { getAttribute: (name: string) => string | null }).getAttribute("href")))).toEqual(["https://example.test/terms", null, null])
      expect(await drawn.locator("script, img").count()).toBe(0)
      expect(await page.evaluate("typeof window.__xss")).toBe("undefined")
      expect(dialogs).toEqual([])
      expect(requested.filter((url) => !url.startsWith(server.origin))).toEqual([])
      expect(loads).toBe(0)
      await context.close()
    }, 60_000)
  })
})
