/**
 * safeFetch against real servers this file starts on 127.0.0.1 (and 127.0.0.2, standing in for a
 * public origin through an injected classifier). No traffic goes anywhere else: refused addresses
 * are refused before a connection is attempted, and every such test asserts the target server saw
 * no connection.
 */
import { Effect, Exit } from "effect"
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer as createNetServer, type Server, type Socket } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { isPublicAddress } from "../../server/platform/net/address-policy.js"
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_TIMEOUT_MS,
  FetchRefused,
  type ResolvedAddress,
  safeFetch,
  type SafeFetchOptions,
  safeFetchEffect
} from "../../server/platform/net/safe-fetch.js"

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly localAddress: string
}

interface TestServer {
  readonly host: string
  readonly port: number
  readonly origin: string
  /** TCP connections accepted so far. */
  connections: number
  readonly requests: Array<Seen>
}

const servers: Array<Server> = []
const sockets = new Set<Socket>()

afterEach(async () => {
  for (const socket of sockets) socket.destroy()
  sockets.clear()
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
})

const listen = (server: Server, host: string, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      const address = server.address()
      if (address === null || typeof address === "string") return reject(new Error("no address"))
      resolve(address.port)
    })
  })

const track = (server: Server, state: { connections: number }) => {
  server.on("connection", (socket: Socket) => {
    state.connections++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
}

/** An HTTP server on `host` (port 0 unless given), counting connections and requests. */
const startHttp = async (
  handler: (req: IncomingMessage, res: ServerResponse, server: TestServer) => void,
  host = "127.0.0.1",
  port = 0
): Promise<TestServer> => {
  const state = { connections: 0, requests: [] as Array<Seen> }
  let self: TestServer | undefined
  const server = createHttpServer((req, res) => {
    state.requests.push({
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      localAddress: req.socket.localAddress ?? ""
    })
    handler(req, res, self!)
  })
  track(server, state)
  const bound = await listen(server, host, port)
  servers.push(server)
  self = Object.assign(state, { host, port: bound, origin: `http://${host}:${bound}` })
  return self
}

/** A raw TCP server that writes `reply` after the first bytes of a request. */
const startRaw = async (reply: (socket: Socket) => void): Promise<TestServer> => {
  const state = { connections: 0, requests: [] as Array<Seen> }
  const server = createNetServer((socket) => {
    socket.on("error", () => undefined)
    socket.once("data", () => reply(socket))
  })
  track(server, state)
  const port = await listen(server, "127.0.0.1", 0)
  servers.push(server)
  return Object.assign(state, { host: "127.0.0.1", port, origin: `http://127.0.0.1:${port}` })
}

const text = (body: string, type = "text/plain; charset=utf-8") => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { "content-type": type, "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const base: SafeFetchOptions = { allowPrivate: true, maxBytes: 1024 * 1024, timeoutMs: 5_000 }
const strict: SafeFetchOptions = { ...base, allowPrivate: false }

/** Runs a fetch expected to fail; returns the refusal. */
const refusal = async (url: string, options: SafeFetchOptions): Promise<FetchRefused> => {
  const outcome = await safeFetch(url, options).then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error })
  )
  if (outcome.ok) throw new Error(`expected a refusal, got ${outcome.result.status} from ${outcome.result.finalUrl}`)
  expect(outcome.error).toBeInstanceOf(FetchRefused)
  const refused = outcome.error as FetchRefused
  expect(refused._tag).toBe("FetchRefused")
  expect(refused.message.length).toBeGreaterThan(10)
  return refused
}

/** A lookup that answers from a table and counts its calls; unknown names fail like DNS does. */
const fakeDns = (table: Record<string, ReadonlyArray<string> | (() => ReadonlyArray<string>)>) => {
  const calls: Array<string> = []
  const lookup = async (hostname: string): Promise<ReadonlyArray<ResolvedAddress>> => {
    calls.push(hostname)
    const entry = table[hostname]
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
    const addresses = typeof entry === "function" ? entry() : entry
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  }
  return { lookup, calls }
}

/** Treats 127.0.0.2 as a public address, everything else by the default policy. */
const classify = (ip: string) => ip === "127.0.0.2" || isPublicAddress(ip)

const canBind = async (host: string) => {
  const server = createNetServer()
  try {
    await listen(server, host, 0)
    return true
  } catch {
    return false
  } finally {
    server.close()
  }
}
const have127002 = await canBind("127.0.0.2")

describe("defaults", () => {
  it("exports the default limits", () => {
    expect(DEFAULT_MAX_BYTES).toBe(10 * 1024 * 1024)
    expect(DEFAULT_TIMEOUT_MS).toBe(15_000)
    expect(DEFAULT_MAX_REDIRECTS).toBe(5)
  })
})

describe("safeFetch with allowPrivate", () => {
  it("fetches the body, content type, status and final URL with a plain GET", async () => {
    const server = await startHttp(text("héllo world", "text/markdown; charset=utf-8"))
    const result = await safeFetch(`${server.origin}/doc.md?x=1#frag`, { ...base, userAgent: "svc-test/1" })
    expect(result.status).toBe(200)
    expect(result.contentType).toBe("text/markdown; charset=utf-8")
    expect(new TextDecoder().decode(result.bytes)).toBe("héllo world")
    expect(result.bytes).toBeInstanceOf(Uint8Array)
    expect(result.finalUrl).toBe(`${server.origin}/doc.md?x=1`)
    expect(result.redirects).toBe(0)
    expect(server.requests).toHaveLength(1)
    const seen = server.requests[0]!
    expect(seen.method).toBe("GET")
    expect(seen.url).toBe("/doc.md?x=1")
    expect(seen.headers["user-agent"]).toBe("svc-test/1")
    expect(seen.headers["accept-encoding"]).toBe("identity")
  })

  it("reports a missing content type as null and accepts any 2xx", async () => {
    const server = await startHttp((_req, res) => {
      res.writeHead(203)
      res.end("x")
    })
    const result = await safeFetch(`${server.origin}/`, base)
    expect(result).toMatchObject({ status: 203, contentType: null })
  })

  it("connects to the address the injected lookup gives, keeping the host name", async () => {
    const server = await startHttp(text("named"))
    const dns = fakeDns({ "docs.example.test": ["127.0.0.1"] })
    const result = await safeFetch(`http://docs.example.test:${server.port}/a`, { ...base, lookup: dns.lookup })
    expect(new TextDecoder().decode(result.bytes)).toBe("named")
    expect(result.finalUrl).toBe(`http://docs.example.test:${server.port}/a`)
    expect(dns.calls).toEqual(["docs.example.test"])
    expect(server.requests[0]!.headers.host).toBe(`docs.example.test:${server.port}`)
  })

  it("follows redirects (relative and absolute, 301/302/303/307/308), always with GET, and counts them", async () => {
    const server = await startHttp((req, res, self) => {
      const steps: Record<string, [number, string]> = {
        "/start": [301, "/two"],
        "/two": [302, `${self.origin}/three`],
        "/three": [303, "four"],
        "/four": [307, "/five?q=1"],
        "/five?q=1": [308, "/done"]
      }
      const step = steps[req.url ?? ""]
      if (step) {
        res.writeHead(step[0], { location: step[1] })
        res.end("moved")
      } else text("arrived")(req, res)
    })
    const result = await safeFetch(`${server.origin}/start`, base)
    expect(new TextDecoder().decode(result.bytes)).toBe("arrived")
    expect(result.redirects).toBe(5)
    expect(result.finalUrl).toBe(`${server.origin}/done`)
    expect(server.requests.map((r) => r.url)).toEqual(["/start", "/two", "/three", "/four", "/five?q=1", "/done"])
    expect(server.requests.every((r) => r.method === "GET")).toBe(true)
  })

  it("refuses past maxRedirects, and a redirect loop past the default of 5", async () => {
    const server = await startHttp((req, res) => {
      const n = Number((req.url ?? "/0").slice(1))
      res.writeHead(302, { location: `/${n + 1}` })
      res.end()
    })
    const limited = await refusal(`${server.origin}/0`, { ...base, maxRedirects: 2 })
    expect(limited.reason).toBe("too_many_redirects")
    expect(server.requests.map((r) => r.url)).toEqual(["/0", "/1", "/2"])

    server.requests.length = 0
    const loop = await refusal(`${server.origin}/0`, base)
    expect(loop.reason).toBe("too_many_redirects")
    expect(server.requests).toHaveLength(DEFAULT_MAX_REDIRECTS + 1)

    const none = await refusal(`${server.origin}/0`, { ...base, maxRedirects: 0 })
    expect(none.reason).toBe("too_many_redirects")
  })

  it("refuses a redirect without Location, and other statuses outside 2xx", async () => {
    const server = await startHttp((req, res) => {
      const status = Number((req.url ?? "/500").slice(1))
      res.writeHead(status)
      res.end("nope")
    })
    for (const status of [404, 500, 403, 418, 301, 302, 304]) {
      const refused = await refusal(`${server.origin}/${status}`, base)
      expect(refused.reason, String(status)).toBe("http_status")
      expect(refused.status).toBe(status)
      expect(refused.message).toContain(String(status))
    }
  })

  it("refuses bad schemes and credentials, also on a redirect", async () => {
    expect((await refusal("ftp://127.0.0.1/x", base)).reason).toBe("bad_scheme")
    expect((await refusal("file:///etc/passwd", base)).reason).toBe("bad_scheme")
    expect((await refusal("http://u:p@127.0.0.1:1/", base)).reason).toBe("credentials")
    expect((await refusal("no url", base)).reason).toBe("invalid_url")
    const server = await startHttp((req, res) => {
      res.writeHead(302, { location: req.url === "/file" ? "file:///etc/passwd" : "http://user:pw@127.0.0.1/" })
      res.end()
    })
    const scheme = await refusal(`${server.origin}/file`, base)
    expect(scheme).toMatchObject({ reason: "bad_scheme", url: "file:///etc/passwd" })
    expect((await refusal(`${server.origin}/creds`, base)).reason).toBe("credentials")
  })
})

describe("size limit", () => {
  const maxBytes = 1000

  it("accepts a body of exactly maxBytes", async () => {
    const server = await startHttp(text("a".repeat(maxBytes)))
    const result = await safeFetch(`${server.origin}/`, { ...base, maxBytes })
    expect(result.bytes.byteLength).toBe(maxBytes)
  })

  it("refuses a declared Content-Length over the limit without reading the body", async () => {
    const server = await startHttp((_req, res) => {
      res.writeHead(200, { "content-length": 50_000_000 })
      res.write("a".repeat(100))
    })
    const refused = await refusal(`${server.origin}/`, { ...base, maxBytes })
    expect(refused.reason).toBe("too_large")
    expect(refused.message).toMatch(/limit/)
  })

  it("refuses a chunked body (no Content-Length) once it passes the limit", async () => {
    let written = 0
    const server = await startHttp((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      const timer = setInterval(() => {
        if (res.destroyed || written > 10_000_000) {
          clearInterval(timer)
          res.end()
          return
        }
        res.write("b".repeat(400))
        written += 400
      }, 1)
    })
    const refused = await refusal(`${server.origin}/`, { ...base, maxBytes })
    expect(refused.reason).toBe("too_large")
    expect(written).toBeLessThan(1_000_000)
  })

  it("counts bytes when no length is declared at all (body runs until the connection closes)", async () => {
    const server = await startRaw((socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
      socket.end(Buffer.alloc(5 * maxBytes, 99))
    })
    const refused = await refusal(`${server.origin}/`, { ...base, maxBytes })
    expect(refused.reason).toBe("too_large")
  })

  it("an understated Content-Length cannot smuggle extra bytes", async () => {
    const server = await startRaw((socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n")
      socket.end(Buffer.alloc(5 * maxBytes, 99))
    })
    const result = await safeFetch(`${server.origin}/`, { ...base, maxBytes })
    expect(result.bytes.byteLength).toBe(100)
  })
})

describe("timeout", () => {
  it("refuses a server that never answers", async () => {
    const server = await startHttp(() => undefined)
    const started = Date.now()
    const refused = await refusal(`${server.origin}/`, { ...base, timeoutMs: 300 })
    expect(refused.reason).toBe("timeout")
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(server.connections).toBe(1)
  })

  it("covers the body: a server that sends headers then trickles is cut off", async () => {
    const server = await startHttp((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write("x")), 50)
      res.on("close", () => clearInterval(timer))
    })
    const started = Date.now()
    const refused = await refusal(`${server.origin}/`, { ...base, timeoutMs: 400 })
    expect(refused.reason).toBe("timeout")
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it("is one deadline for the whole redirect chain", async () => {
    const server = await startHttp((req, res) => {
      setTimeout(() => {
        res.writeHead(302, { location: `${req.url}x` })
        res.end()
      }, 150)
    })
    const refused = await refusal(`${server.origin}/`, { ...base, timeoutMs: 400, maxRedirects: 20 })
    expect(refused.reason).toBe("timeout")
    expect(server.requests.length).toBeLessThanOrEqual(4)
  })

  it("reports a cancelled fetch", async () => {
    const server = await startHttp(() => undefined)
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const refused = await refusal(`${server.origin}/`, { ...base, signal: controller.signal })
    expect(refused.reason).toBe("cancelled")
  })
})

describe("connection errors", () => {
  it("reports a closed port and an unknown host name", async () => {
    const server = await startHttp(text("x"))
    const port = server.port
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()))
    const closed = await refusal(`http://127.0.0.1:${port}/`, base)
    expect(closed.reason).toBe("connection_error")
    expect(closed.message).toContain("refused")

    const dns = fakeDns({})
    const unknown = await refusal(`http://nowhere.test:${port}/`, { ...base, lookup: dns.lookup })
    expect(unknown.reason).toBe("connection_error")
    expect(unknown.message).toContain("resolved")
  })
})

describe("safeFetch without allowPrivate", () => {
  it("refuses loopback IP literals, however spelled, before connecting", async () => {
    const server = await startHttp(text("secret"))
    for (const url of [
      `http://127.0.0.1:${server.port}/`,
      `http://2130706433:${server.port}/`,
      `http://0x7f.1:${server.port}/`,
      `http://[::ffff:127.0.0.1]:${server.port}/`,
      `http://localhost:${server.port}/`
    ]) {
      const refused = await refusal(url, strict)
      expect(refused.reason, url).toBe("blocked_address")
    }
    expect(server.connections).toBe(0)
  })

  it("refuses a host name whose lookup gives a loopback address, without connecting", async () => {
    const server = await startHttp(text("secret"))
    const dns = fakeDns({ "innocent.example.test": ["127.0.0.1"] })
    const refused = await refusal(`http://innocent.example.test:${server.port}/`, { ...strict, lookup: dns.lookup })
    expect(refused).toMatchObject({ reason: "blocked_address", address: "127.0.0.1" })
    expect(refused.message).toContain("innocent.example.test")
    expect(dns.calls).toEqual(["innocent.example.test"])
    expect(server.connections).toBe(0)
  })

  it("refuses when any resolved address is blocked (IPv4-mapped and metadata forms too)", async () => {
    const server = await startHttp(text("secret"))
    for (const answer of [["::ffff:127.0.0.1"], ["169.254.169.254"], ["::1"], ["64:ff9b::7f00:1"]]) {
      const dns = fakeDns({ "mixed.example.test": answer })
      const refused = await refusal(`http://mixed.example.test:${server.port}/`, { ...strict, lookup: dns.lookup })
      expect(refused.reason, answer.join()).toBe("blocked_address")
    }
    expect(server.connections).toBe(0)
  })

  it("checks IP literals again at connect time (the connector does not rely on checkUrl)", async () => {
    const server = await startHttp(text("secret"))
    let calls = 0
    // Says "public" to the first check (checkUrl), "blocked" to every later one (the connector).
    const fickle = (ip: string) => (++calls === 1 ? true : isPublicAddress(ip))
    const refused = await refusal(`http://127.0.0.1:${server.port}/`, { ...strict, classify: fickle })
    expect(refused).toMatchObject({ reason: "blocked_address", address: "127.0.0.1" })
    expect(calls).toBe(2)
    expect(server.connections).toBe(0)
  })

  it("refuses in the same way through safeFetchEffect", async () => {
    const server = await startHttp(text("secret"))
    const exit = await Effect.runPromiseExit(safeFetchEffect(`${server.origin}/`, strict))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(exit.cause._tag).toBe("Fail")
      if (exit.cause._tag === "Fail") expect(exit.cause.error).toMatchObject({ _tag: "FetchRefused", reason: "blocked_address" })
    }
    const ok = await Effect.runPromise(safeFetchEffect(`${server.origin}/`, base))
    expect(new TextDecoder().decode(ok.bytes)).toBe("secret")
    expect(server.connections).toBe(1)
  })
})

describe.skipIf(!have127002)("an allowed origin (127.0.0.2 classified as public)", () => {
  it("is fetched normally", async () => {
    const allowed = await startHttp(text("public page"), "127.0.0.2")
    const result = await safeFetch(`${allowed.origin}/`, { ...strict, classify })
    expect(new TextDecoder().decode(result.bytes)).toBe("public page")
    expect(allowed.requests[0]!.localAddress).toBe("127.0.0.2")
  })

  it("cannot redirect to a blocked address", async () => {
    const trap = await startHttp(text("secret"))
    const allowed = await startHttp((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${trap.port}/admin` })
      res.end()
    }, "127.0.0.2")
    const refused = await refusal(`${allowed.origin}/`, { ...strict, classify })
    expect(refused).toMatchObject({ reason: "blocked_address", url: `http://127.0.0.1:${trap.port}/admin` })
    expect(allowed.connections).toBe(1)
    expect(trap.connections).toBe(0)
  })

  it("cannot redirect to a host name that resolves to a blocked address", async () => {
    const trap = await startHttp(text("secret"))
    const allowed = await startHttp((_req, res) => {
      res.writeHead(301, { location: `http://internal.example.test:${trap.port}/` })
      res.end()
    }, "127.0.0.2")
    const dns = fakeDns({ "internal.example.test": ["127.0.0.1"] })
    const refused = await refusal(`${allowed.origin}/`, { ...strict, classify, lookup: dns.lookup })
    expect(refused).toMatchObject({ reason: "blocked_address", address: "127.0.0.1" })
    expect(trap.connections).toBe(0)
  })

  it("refuses a name with a public and a blocked answer (no cherry-picking)", async () => {
    const trap = await startHttp(text("secret"))
    const allowed = await startHttp(text("public page"), "127.0.0.2", trap.port).catch(() => null)
    const dns = fakeDns({ "both.example.test": ["127.0.0.2", "127.0.0.1"] })
    const refused = await refusal(`http://both.example.test:${trap.port}/`, { ...strict, classify, lookup: dns.lookup })
    expect(refused).toMatchObject({ reason: "blocked_address", address: "127.0.0.1" })
    expect(trap.connections).toBe(0)
    expect(allowed?.connections ?? 0).toBe(0)
  })

  it("resolves once per hop and connects to the checked address (DNS rebinding has no second chance)", async () => {
    // The same port on 127.0.0.2 (the "public" answer) and 127.0.0.1 (the rebound answer).
    let pair: { allowed: TestServer; trap: TestServer } | null = null
    for (let attempt = 0; attempt < 10 && pair === null; attempt++) {
      const allowed = await startHttp((req, res) => {
        if (req.url === "/") {
          // Close the connection so the next hop needs a new one (and a new resolution).
          res.writeHead(302, { location: "/again", connection: "close" })
          res.end()
        } else text("public page")(req, res)
      }, "127.0.0.2")
      const trap = await startHttp(text("secret"), "127.0.0.1", allowed.port).catch(() => null)
      if (trap !== null) pair = { allowed, trap }
    }
    if (pair === null) throw new Error("could not bind one port on both 127.0.0.1 and 127.0.0.2")
    const { allowed, trap } = pair
    const answers = [["127.0.0.2"], ["127.0.0.1"]]
    const dns = fakeDns({ "rebind.example.test": () => answers.shift() ?? ["127.0.0.1"] })

    // A single hop: one resolution, and the request lands on the address that was checked.
    const single = await safeFetch(`http://rebind.example.test:${allowed.port}/again`, {
      ...strict,
      classify,
      lookup: dns.lookup
    })
    expect(new TextDecoder().decode(single.bytes)).toBe("public page")
    expect(dns.calls).toHaveLength(1)
    expect(allowed.requests.map((r) => r.localAddress)).toEqual(["127.0.0.2"])
    expect(trap.connections).toBe(0)

    // The next hop needs a new connection: resolved again, the rebound answer is refused.
    answers.splice(0, answers.length, ["127.0.0.2"], ["127.0.0.1"])
    dns.calls.length = 0
    const refused = await refusal(`http://rebind.example.test:${allowed.port}/`, { ...strict, classify, lookup: dns.lookup })
    expect(refused).toMatchObject({ reason: "blocked_address", address: "127.0.0.1" })
    expect(dns.calls).toHaveLength(2)
    expect(trap.connections).toBe(0)
  })
})
