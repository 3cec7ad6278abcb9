/**
 * Child process of the benchmarks of several instances (issue 24): a round-robin HTTP load balancer
 * in front of svc instances, built on http-proxy-3 (a maintained rewrite of http-proxy), in a process
 * of its own so its CPU is measured apart from the instances' and the load generator's.
 *
 * Each request goes to the next instance in turn, with no stickiness (no cookie, no session
 * affinity, MCP included), over keep-alive connections; responses stream through as they come
 * (Server-Sent Events included). A request body is read whole first, so that a request refused at
 * connect time (`ECONNREFUSED`: the instance is down and the request never reached it) can go to the
 * next instance, the way HAProxy's `retry-on conn-failure` does; that instance is then passed over
 * for a moment. Any other failure (an instance killed mid-request) closes the client's connection
 * without an answer: the client cannot know the request's fate, and is not told a made-up status.
 *
 * Prints one JSON ready line (`BalancerReady`); a line `counts` on stdin is answered with
 * `{"counts":[…]}`, the requests sent to each target so far (in the order given).
 *
 *   node dist/bench/balancer.js --target http://127.0.0.1:A --target http://127.0.0.1:B [--port 0]
 */
import { Agent, createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createInterface } from "node:readline"
import { Readable } from "node:stream"
import { parseArgs } from "node:util"
import { createProxyServer } from "http-proxy-3"
import type { BalancerReady } from "./instances-protocol.js"

const { values } = parseArgs({ options: { target: { type: "string", multiple: true }, port: { type: "string", default: "0" } } })
const targets = (values.target ?? []).map((target) => new URL(target))
if (targets.length === 0) throw new Error("--target is required (one per instance)")

/** How long an instance that refused a connection is passed over. */
const downForMs = 250

const agent = new Agent({ keepAlive: true, maxSockets: 512 })
const proxy = createProxyServer({ agent, proxyTimeout: 120_000 })
/** Requests sent to each target. */
const counts = targets.map(() => 0)
/** Until when (ms) each target is passed over. */
const downUntil = targets.map(() => 0)
let turn = 0

/** The next target in turn that is not passed over (any, when all are). */
const nextTarget = (): number => {
  const now = Date.now()
  for (let tried = 0; tried < targets.length; tried++) {
    const index = turn++ % targets.length
    if (downUntil[index]! <= now) return index
  }
  return turn++ % targets.length
}

/** An instance that dies while it answers: the client's answer is cut off too. */
proxy.on("proxyRes", (proxyRes, _req, res) => {
  proxyRes.on("close", () => {
    if (!proxyRes.complete) res.destroy()
  })
})

/** Sends `req` (whose body is `body`) to the next instance, trying the others while they refuse connections. */
const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, attempt: number): void => {
  const index = nextTarget()
  counts[index]!++
  proxy.web(req, res, { target: targets[index]!, buffer: Readable.from(body.length === 0 ? [] : [body]) }, (error) => {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ECONNREFUSED" && attempt + 1 < targets.length * 4 && !res.headersSent) {
      downUntil[index] = Date.now() + downForMs
      forward(req, res, body, attempt + 1)
      return
    }
    res.destroy()
  })
}

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => forward(req, res, Buffer.concat(chunks), 0))
  req.on("error", () => res.destroy())
})
server.keepAliveTimeout = 60_000
server.listen(Number(values.port), "127.0.0.1", () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  const origin = `http://127.0.0.1:${port}`
  const ready: BalancerReady = { ready: true, pid: process.pid, origin, baseUrl: `${origin}/api/v1`, targets: targets.map(String) }
  process.stdout.write(`${JSON.stringify(ready)}\n`)
})

const stop = () => {
  server.close()
  server.closeAllConnections()
  agent.destroy()
  process.exit(0)
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
createInterface({ input: process.stdin })
  .on("line", (line) => {
    if (line.trim() === "counts") process.stdout.write(`${JSON.stringify({ counts })}\n`)
  })
  .on("close", stop)
