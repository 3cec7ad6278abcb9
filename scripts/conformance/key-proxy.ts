/**
 * A loopback forwarder that adds `Authorization: Bearer <key>` to every request and passes
 * everything else through as it came (method, path, `Host`, `Origin`, body, and the answer's
 * status, headers and streamed body). The official MCP conformance suite connects to a server
 * with no credentials (it has no option for them); svc's `/mcp` wants a member's key, as every
 * real client sends. The forwarder plays that client's part and nothing more: the suite's own
 * `Host` and `Origin` still reach svc, so `dns-rebinding-protection` tests svc's checks.
 */
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** A running forwarder: `origin` stands in for the target's origin. */
export interface KeyProxy {
  readonly origin: string
  readonly close: () => Promise<void>
}

/** Starts a forwarder on 127.0.0.1 (any free port) to `target` (an origin), adding `key`. */
export const startKeyProxy = async (target: string, key: string): Promise<KeyProxy> => {
  const upstream = new URL(target)
  const server: Server = createServer((incoming, outgoing) => {
    const forwarded = request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${key}` }
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      }
    )
    forwarded.on("error", (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "text/plain" })
      outgoing.end(`key proxy: ${error.message}`)
    })
    incoming.pipe(forwarded)
    outgoing.on("close", () => forwarded.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
