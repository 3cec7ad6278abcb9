/**
 * A TCP proxy for tests that cuts connections mid-response: every connection is forwarded to the
 * target as it is, until `cutAfter(text)` is armed; the first response chunk containing `text` is
 * then forwarded and both sides of that connection are destroyed, as a network that drops. It
 * records the head of each request it forwarded (request line and headers).
 */
import { connect, createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { closeTogether } from "./socket-pair.js"

/** The proxy: its base URL (the target's path kept), the request heads it saw, and its switch. */
export interface CuttingProxy {
  /** `http://127.0.0.1:PORT` plus the target URL's path. */
  readonly baseUrl: string
  /** Each request's head, lower-cased header names: `{line, headers}`. */
  readonly requests: Array<{ readonly line: string; readonly headers: Readonly<Record<string, string>> }>
  /** Cuts the connection whose response next carries `text` (once). */
  readonly cutAfter: (text: string) => void
  /** How many connections were cut. */
  readonly cuts: () => number
  readonly close: () => Promise<void>
}

/** Starts a proxy in front of `target` (a base URL such as `http://127.0.0.1:PORT/api/v1`). */
export const startCuttingProxy = async (target: string): Promise<CuttingProxy> => {
  const url = new URL(target)
  const sockets = new Set<Socket>()
  const requests: Array<{ line: string; headers: Record<string, string> }> = []
  let armed: string | null = null
  let cut = 0
  const server = createServer((client) => {
    const upstream = connect(Number(url.port), url.hostname)
    sockets.add(client)
    sockets.add(upstream)
    let head = ""
    client.on("data", (chunk: Buffer) => {
      head += chunk.toString("latin1")
      for (let end = head.indexOf("\r\n\r\n"); end !== -1; end = head.indexOf("\r\n\r\n")) {
        const [line, ...fields] = head.slice(0, end).split("\r\n")
        const headers = Object.fromEntries(
          fields.map((field) => [field.slice(0, field.indexOf(":")).trim().toLowerCase(), field.slice(field.indexOf(":") + 1).trim()])
        )
        if (/^[A-Z]+ \//.test(line!)) requests.push({ line: line!, headers })
        head = head.slice(end + 4)
      }
      upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => {
      client.write(chunk)
      if (armed !== null && chunk.toString("utf8").includes(armed)) {
        armed = null
        cut++
        client.destroy()
        upstream.destroy()
      }
    })
    closeTogether(client, upstream, sockets)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}${url.pathname.replace(/\/$/, "")}`,
    requests,
    cutAfter: (text) => {
      armed = text
    },
    cuts: () => cut,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
