/**
 * `url` sources against local HTTP servers this file starts. Without `allowPrivateUrls` every
 * loopback, private, link-local or otherwise non-public address (and `localhost`, and schemes other
 * than http(s)) is refused with 400 before anything is written or fetched. With an injected
 * classifier that treats 127.0.0.1 as public, the worker fetches pages end to end (HTML, text,
 * markdown, PDF), and every way a fetch can go wrong (a redirect to a non-public address, a body
 * over the limit, an HTTP error, a stalled server) turns the source `failed` with an errorMessage.
 * With `allowPrivateUrls` loopback URLs are fetched directly.
 */
import { lookup } from "node:dns/promises"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer as createNetServer } from "node:net"
import { hostname } from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isPublicAddress } from "../../server/platform/net/address-policy.js"
import { expectError, insertKnowledgebases } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { makeWorkerClock } from "../support/worker-clock.js"
import { expectNoSourceRows } from "../support/source-rows.js"
import { accepted, documentHits, expectNothingWritten, fixtureBytes, fixtureSize, listSources, readSource, uploadJson, waitForSource } from "../support/sources.js"
import { type WebServer, startWebServer } from "../support/web-server.js"

const fast = { requestsPerMinute: 1_000_000 } as const

/** What the local "web" serves, by path. */
const routes = (v6: () => WebServer, self: () => WebServer) => (req: IncomingMessage, res: ServerResponse) => {
  const path = new URL(req.url ?? "/", "http://x").pathname
  const send = (status: number, type: string, body: string | Uint8Array, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": type, ...headers })
    res.end(body)
  }
  const redirect = (location: string, status = 302) => {
    res.writeHead(status, { location })
    res.end()
  }
  switch (path) {
    case "/page.html":
      return send(200, "text/html; charset=utf-8", fixtureBytes("page.html"))
    case "/notes":
      return send(200, "text/plain; charset=utf-8", fixtureBytes("notes.txt"))
    case "/guide.md":
      return send(200, "application/octet-stream", fixtureBytes("guide.md"))
    case "/handbook":
      return send(200, "application/pdf", fixtureBytes("handbook.pdf"))
    case "/scanned.pdf":
      return send(200, "application/pdf", fixtureBytes("scanned.pdf"))
    case "/redirect/same-host":
      return redirect("/page.html", 301)
    case "/redirect/v6":
      return redirect(`${v6().origin}/page.html`)
    case "/redirect/private":
      return redirect("http://10.0.0.1/")
    case "/redirect/metadata":
      return redirect("http://169.254.169.254/latest/meta-data", 307)
    case "/redirect/localhost":
      return redirect(`http://localhost:${self().port}/page.html`)
    case "/redirect/loop":
      return redirect("/redirect/loop")
    case "/redirect/ftp":
      return redirect("ftp://example.com/file.txt")
    case "/missing":
      return send(404, "text/plain", "not here")
    case "/broken":
      return send(500, "text/plain", "oops")
    case "/big": {
      // Declared up front: refused from the Content-Length.
      const body = new Uint8Array(4_600_000).fill(0x61)
      return send(200, "text/plain", body, { "content-length": String(body.byteLength) })
    }
    case "/big-chunked": {
      // No Content-Length: counted while it streams.
      res.writeHead(200, { "content-type": "text/plain" })
      const chunk = "b".repeat(100_000)
      let sent = 0
      const pump = () => {
        while (sent < 4_700_000) {
          sent += chunk.length
          if (!res.write(chunk)) return res.once("drain", pump)
        }
        res.end()
      }
      res.on("error", () => undefined)
      return pump()
    }
    case "/picture.png":
      return send(200, "image/png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe]))
    case "/empty":
      return send(200, "text/plain", "")
    case "/stall":
      // Never answers.
      return
    default:
      return send(404, "text/plain", "no route")
  }
}

/** This machine's name, and whether it resolves only to non-public addresses (then it must be refused). */
const localName = hostname()
const resolvesLocally = await lookup(localName, { all: true }).then(
  (addresses) => addresses.length > 0 && addresses.every((entry) => !isPublicAddress(entry.address)),
  () => false
)

let web: WebServer
let webV6: WebServer
/** A port nothing listens on. */
let closedPort: number
beforeAll(async () => {
  web = await startWebServer((req, res) => routes(() => webV6, () => web)(req, res))
  webV6 = await startWebServer((req, res) => routes(() => webV6, () => webV6)(req, res), "::1")
  const probe = createNetServer()
  closedPort = await new Promise<number>((resolve) =>
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  )
})
afterAll(async () => {
  await web?.close()
  await webV6?.close()
})

const newKnowledgebase = async (server: TestServer): Promise<string> =>
  (await insertKnowledgebases(server, { count: 1, prefix: "Web" }))[0]!.id
const changes = async (server: TestServer, kb: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`)
  expect(response.status).toBe(200)
  return response.body.changes as Array<any>
}

describe("without allowPrivateUrls (the default policy)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ server: fast })
  })
  afterAll(() => server.stop())

  const refused = () => [
    ["loopback IPv4", `http://127.0.0.1:${web.port}/page.html`],
    ["another loopback address", `http://127.1.2.3:${web.port}/page.html`],
    ["localhost", `http://localhost:${web.port}/page.html`],
    ["a name under .localhost", `http://app.localhost:${web.port}/page.html`],
    ["loopback IPv6", `http://[::1]:${webV6.port}/page.html`],
    ["IPv4-mapped loopback", `http://[::ffff:127.0.0.1]:${web.port}/page.html`],
    ["loopback written as one decimal number", `http://2130706433:${web.port}/page.html`],
    ["loopback written in hex", `http://0x7f.0.0.1:${web.port}/page.html`],
    ["the cloud metadata address", "http://169.254.169.254/latest/meta-data"],
    ["a private 10.x address", "http://10.0.0.1/"],
    ["a private 192.168.x address", "https://192.168.1.1/admin"],
    ["a private 172.16.x address", "http://172.16.0.5/"],
    ["carrier-grade NAT", "http://100.64.0.1/"],
    ["the unspecified address", `http://0.0.0.0:${web.port}/`],
    ["a unique-local IPv6 address", "http://[fd00::1]/"],
    ["a link-local IPv6 address", "http://[fe80::1]/"],
    ["ftp", "ftp://example.com/file.txt"],
    ["file", "file:///etc/passwd"],
    ["javascript", "javascript:alert(1)"],
    ["a URL with credentials", "http://user:secret@example.com/"],
    ["not a URL", "not a url at all"],
    ["an empty string", ""]
  ]

  it("every non-public or non-http(s) url → 400 invalid_request naming `url`, nothing written, nothing fetched", async () => {
    const kb = await newKnowledgebase(server)
    const cases = refused()
    const seen = web.connections + webV6.connections
    await expectNothingWritten(server, kb, () =>
      expectNoSourceRows(server, async () => {
        for (const [label, url] of cases) {
          const response = await uploadJson(server, kb, { name: `Refused: ${label}`, url })
          expect({ label, status: response.status, code: response.body?.error?.code }).toEqual({ label, status: 400, code: "invalid_request" })
          expect(expectError(response, 400, "invalid_request")).toMatch(/url/i)
        }
      })
    )
    expect(web.connections + webV6.connections).toBe(seen)
  })

  it("the messages say why: a non-public address, the scheme, the credentials", async () => {
    const kb = await newKnowledgebase(server)
    const message = async (url: string) => expectError(await uploadJson(server, kb, { name: "x", url }), 400, "invalid_request")
    expect(await message(`http://127.0.0.1:${web.port}/`)).toMatch(/not a public address/)
    expect(await message("http://169.254.169.254/latest/meta-data")).toMatch(/169\.254\.169\.254.*not a public address/)
    expect(await message(`http://localhost:${web.port}/`)).toMatch(/localhost/)
    expect(await message("ftp://example.com/file.txt")).toMatch(/http and https/)
    expect(await message("http://user:secret@example.com/")).toMatch(/user name or password/)
  })

  it.runIf(resolvesLocally && !/localhost/i.test(localName))(
    "a host name that resolves to a non-public address (this machine's name) → 400 invalid_request, nothing fetched",
    async () => {
      const kb = await newKnowledgebase(server)
      const seen = web.connections
      await expectNoSourceRows(server, async () => {
        expect(expectError(await uploadJson(server, kb, { name: "By name", url: `http://${localName}:${web.port}/page.html` }), 400, "invalid_request")).toMatch(
          /not a public address/
        )
      })
      expect(web.connections).toBe(seen)
    }
  )

  it("a url is still one of the three contents: with contentText too → 400 invalid_request", async () => {
    const kb = await newKnowledgebase(server)
    await expectNoSourceRows(server, async () => {
      expectError(await uploadJson(server, kb, { name: "Both", url: "https://example.com/", contentText: "x" }), 400, "invalid_request")
    })
  })
})

describe("with 127.0.0.1 treated as public (ingestion.isPublic)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ server: { ...fast, ingestion: { isPublic: (ip: string) => ip === "127.0.0.1" } } })
  })
  afterAll(() => server.stop())

  /** Uploads `path` of the local web server as a url source and waits until it is no longer processing. */
  const fetchSource = async (kb: string, path: string, name = `Page ${path}`) => {
    const url = `${web.origin}${path}`
    const response = await uploadJson(server, kb, { name, url })
    const source = accepted(response)
    expect(source).toMatchObject({ name, url, status: "processing", searchable: false, errorMessage: null, createdVia: "api" })
    expect(response.body.reviewPath).toBeNull()
    return waitForSource(server, kb, source.id)
  }

  it("an HTML page → ready, type html, sizeBytes the page's size; its text is searchable, scripts are not", async () => {
    const kb = await newKnowledgebase(server)
    const before = web.requests.length
    const source = await fetchSource(kb, "/page.html", "Status page")
    expect(source).toMatchObject({
      status: "ready",
      searchable: true,
      type: "html",
      url: `${web.origin}/page.html`,
      sizeBytes: fixtureSize("page.html"),
      errorMessage: null
    })
    expect(web.requests.slice(before)).toEqual([{ method: "GET", url: "/page.html" }])
    const hits = await documentHits(server, kb, "maintenance")
    expect(hits).toHaveLength(1)
    expect(hits[0]).toMatchObject({
      title: "Status page",
      citation: { kind: "document", knowledgebaseId: kb, sourceId: source.id, sourceName: "Status page", section: null }
    })
    expect(hits[0].snippet).toMatch(/maintenance/i)
    expect(await documentHits(server, kb, "operational")).toHaveLength(1)
    expect(await documentHits(server, kb, "injected")).toHaveLength(0)
    expect(await documentHits(server, kb, "analytics")).toHaveLength(0)
    expect(await changes(server, kb)).toEqual([
      expect.objectContaining({ id: source.id, type: "source", change: "created" }),
      expect.objectContaining({ id: source.id, type: "source", change: "ready" })
    ])
    expect((await listSources(server, kb))[0]).toEqual(source)
  })

  it("plain text, markdown (by the path's extension) and PDF pages are fetched and indexed by type", async () => {
    const kb = await newKnowledgebase(server)
    expect(await fetchSource(kb, "/notes")).toMatchObject({ status: "ready", type: "txt", sizeBytes: fixtureSize("notes.txt") })
    expect(await fetchSource(kb, "/guide.md")).toMatchObject({ status: "ready", type: "md", sizeBytes: fixtureSize("guide.md") })
    const pdf = await fetchSource(kb, "/handbook")
    expect(pdf).toMatchObject({ status: "ready", type: "pdf", sizeBytes: fixtureSize("handbook.pdf") })
    const hits = await documentHits(server, kb, "mileage")
    expect(hits.map((hit) => hit.citation.sourceId)).toEqual([pdf.id])
    expect(hits[0].citation.section).toMatch(/^page \d+$/)
  })

  it("a fetched PDF without text → failed, errorMessage about no text", async () => {
    const kb = await newKnowledgebase(server)
    const source = await fetchSource(kb, "/scanned.pdf")
    expect(source).toMatchObject({ status: "failed", searchable: false })
    expect(source.errorMessage).toMatch(/no extractable text/i)
  })

  it("a redirect to the same host is followed; the source keeps the url it was given", async () => {
    const kb = await newKnowledgebase(server)
    const source = await fetchSource(kb, "/redirect/same-host")
    expect(source).toMatchObject({ status: "ready", type: "html", url: `${web.origin}/redirect/same-host` })
  })

  it("a redirect to http://[::1]:PORT/ → failed, errorMessage about a non-public address; nothing connects to ::1", async () => {
    const kb = await newKnowledgebase(server)
    const seen = webV6.connections
    const source = await fetchSource(kb, "/redirect/v6")
    expect(source).toMatchObject({ status: "failed", searchable: false })
    expect(source.errorMessage).toMatch(/::1/)
    expect(source.errorMessage).toMatch(/not a public address/)
    expect(webV6.connections).toBe(seen)
    expect(await documentHits(server, kb, "maintenance")).toHaveLength(0)
  })

  it.each([
    ["a private 10.x address", "/redirect/private", /10\.0\.0\.1.*not a public address/],
    ["the cloud metadata address", "/redirect/metadata", /169\.254\.169\.254.*not a public address/],
    ["localhost", "/redirect/localhost", /localhost.*(only public addresses|this machine)/i],
    ["an ftp URL", "/redirect/ftp", /http and https/]
  ])("a redirect to %s → failed with an errorMessage saying why", async (_label, path, reason) => {
    const kb = await newKnowledgebase(server)
    const source = await fetchSource(kb, path)
    expect(source.status).toBe("failed")
    expect(source.errorMessage).toMatch(reason)
  })

  it("a redirect loop → failed, errorMessage about redirects", async () => {
    const kb = await newKnowledgebase(server)
    const source = await fetchSource(kb, "/redirect/loop")
    expect(source.status).toBe("failed")
    expect(source.errorMessage).toMatch(/redirected more than \d+ times/)
  })

  it.each([
    ["a 404", "/missing", /404/],
    ["a 500", "/broken", /500/]
  ])("%s → failed, errorMessage naming the HTTP status", async (_label, path, reason) => {
    const kb = await newKnowledgebase(server)
    const source = await fetchSource(kb, path)
    expect(source).toMatchObject({ status: "failed", searchable: false })
    expect(source.errorMessage).toMatch(reason)
  })

  it("a body over the fetch limit (declared, or streamed without a length) → failed, errorMessage about the limit", async () => {
    const kb = await newKnowledgebase(server)
    const declared = await fetchSource(kb, "/big")
    expect(declared.status).toBe("failed")
    expect(declared.errorMessage).toMatch(/limit/)
    const streamed = await fetchSource(kb, "/big-chunked")
    expect(streamed.status).toBe("failed")
    expect(streamed.errorMessage).toMatch(/limit/)
  })

  it("a server that refuses the connection → failed, errorMessage about the connection", async () => {
    const kb = await newKnowledgebase(server)
    const source = accepted(await uploadJson(server, kb, { name: "Nobody home", url: `http://127.0.0.1:${closedPort}/` }))
    const failed = await waitForSource(server, kb, source.id)
    expect(failed.status).toBe("failed")
    expect(failed.errorMessage).toMatch(/refused|could not fetch/i)
  })

  it("binary content that is no document, or an empty page → failed with an errorMessage", async () => {
    const kb = await newKnowledgebase(server)
    const binary = await fetchSource(kb, "/picture.png")
    expect(binary.status).toBe("failed")
    expect(binary.errorMessage).toMatch(/text|type|UTF-8/i)
    const empty = await fetchSource(kb, "/empty")
    expect(empty.status).toBe("failed")
    expect(empty.errorMessage).toMatch(/no text/i)
  })

  it("loopback other than 127.0.0.1, and localhost, are still refused up front (400), nothing written", async () => {
    const kb = await newKnowledgebase(server)
    await expectNothingWritten(server, kb, () =>
      expectNoSourceRows(server, async () => {
        for (const url of [`http://[::1]:${webV6.port}/page.html`, `http://localhost:${web.port}/page.html`, "http://10.0.0.1/", `http://127.0.0.2:${web.port}/`]) {
          expectError(await uploadJson(server, kb, { name: "Refused", url }), 400, "invalid_request")
        }
      })
    )
  })

  it("an accepted url upload is written at once (processing, counted, in the feed) before anything is fetched", async () => {
    const kb = await newKnowledgebase(server)
    const response = await uploadJson(server, kb, { name: "Stalling", url: `${web.origin}/stall` })
    const source = accepted(response)
    expect(await readSource(server, kb, source.id)).toMatchObject({ status: "processing", url: `${web.origin}/stall` })
    const detail = await server.request("GET", `/knowledgebases/${kb}`)
    expect(detail.body.knowledgebase.counts.sources).toBe(1)
    expect(await changes(server, kb)).toEqual([expect.objectContaining({ id: source.id, change: "created" })])
  })
})

describe("job and fetch time limits on url sources", () => {
  it("a stalled server past jobTimeoutMs (on the worker's clock) → failed, errorMessage saying indexing did not finish in time", async () => {
    const time = await makeWorkerClock()
    const server = await startTestServer({
      server: { ...fast, ingestion: { isPublic: (ip: string) => ip === "127.0.0.1", jobTimeoutMs: 120_000, clock: time.clock } }
    })
    try {
      const kb = await newKnowledgebase(server)
      const path = `/stall?job=${Date.now()}`
      const source = accepted(await uploadJson(server, kb, { name: "Stalled", url: `${web.origin}${path}` }))
      // The worker is fetching (and the job's time limit runs) once the page was asked for.
      for (const deadline = Date.now() + 10_000; !web.requests.some((request) => request.url === path); ) {
        if (Date.now() > deadline) throw new Error("the worker never fetched the page")
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await time.advance(119_999)
      expect((await readSource(server, kb, source.id)).status).toBe("processing")
      await time.advance(1)
      await time.idle()
      const failed = await readSource(server, kb, source.id)
      expect(failed.status).toBe("failed")
      expect(failed.errorMessage).toMatch(/did not finish within 120 seconds/)
      // The worker is free again: the next upload is indexed.
      const next = accepted(await uploadJson(server, kb, { name: "After the stall", contentText: `Indexed after a stalled job ${Date.now()}.` }))
      expect(await waitForSource(server, kb, next.id, { timeoutMs: 10_000 })).toMatchObject({ status: "ready" })
    } finally {
      await server.stop()
      await time.close()
    }
  })

  it("a stalled server past fetchTimeoutMs → failed, errorMessage saying the page did not answer in time", async () => {
    const server = await startTestServer({
      server: { ...fast, ingestion: { isPublic: (ip: string) => ip === "127.0.0.1", fetchTimeoutMs: 500 } }
    })
    try {
      const kb = await newKnowledgebase(server)
      const source = accepted(await uploadJson(server, kb, { name: "Slow page", url: `${web.origin}/stall` }))
      const failed = await waitForSource(server, kb, source.id, { timeoutMs: 10_000 })
      expect(failed.status).toBe("failed")
      expect(failed.errorMessage).toMatch(/did not answer in full within 0\.5 s/)
    } finally {
      await server.stop()
    }
  })
})

describe("with allowPrivateUrls", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ server: { ...fast, allowPrivateUrls: true } })
  })
  afterAll(() => server.stop())

  it("a loopback URL (127.0.0.1, localhost, [::1]) is fetched directly and indexed", async () => {
    const kb = await newKnowledgebase(server)
    for (const url of [`http://127.0.0.1:${web.port}/page.html`, `http://localhost:${web.port}/notes`, `http://[::1]:${webV6.port}/guide.md`]) {
      const source = accepted(await uploadJson(server, kb, { name: url, url }))
      expect(await waitForSource(server, kb, source.id)).toMatchObject({ status: "ready", searchable: true, url })
    }
    expect((await documentHits(server, kb, "maintenance")).length).toBe(1)
    expect((await documentHits(server, kb, "handover")).length).toBe(1)
    expect((await documentHits(server, kb, "troubleshooting")).length).toBe(1)
  })

  it("a redirect to a private address is followed too", async () => {
    const kb = await newKnowledgebase(server)
    const source = accepted(await uploadJson(server, kb, { name: "To v6", url: `${web.origin}/redirect/v6` }))
    expect(await waitForSource(server, kb, source.id)).toMatchObject({ status: "ready", type: "html" })
  })

  it("schemes and credentials are still checked: ftp, file and user:password URLs → 400, nothing written", async () => {
    const kb = await newKnowledgebase(server)
    await expectNothingWritten(server, kb, () =>
      expectNoSourceRows(server, async () => {
        for (const url of ["ftp://127.0.0.1/file.txt", "file:///etc/passwd", `http://user:pw@127.0.0.1:${web.port}/page.html`]) {
          expectError(await uploadJson(server, kb, { name: "Refused", url }), 400, "invalid_request")
        }
      })
    )
  })

  it("Idempotency-Key on a url upload: the replay answers the first 202 and fetches once", async () => {
    const kb = await newKnowledgebase(server)
    const headers = { "idempotency-key": `url-${kb}` }
    const body = { name: "Once", url: `${web.origin}/notes?once=${kb}` }
    const first = await uploadJson(server, kb, body, { headers })
    expect(first.status).toBe(202)
    await waitForSource(server, kb, first.body.source.id)
    const second = await uploadJson(server, kb, body, { headers })
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(web.requests.filter((request) => request.url === `/notes?once=${kb}`)).toHaveLength(1)
    expect((await listSources(server, kb)).map((source) => source.id)).toEqual([first.body.source.id])
  })
})
