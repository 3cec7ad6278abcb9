/**
 * A TCP proxy in front of PostgreSQL that counts round trips: it forwards every byte both ways and
 * reads the client's messages of the frontend protocol as they pass. A simple query (`Q`) or the
 * `Sync` (`S`) that ends an extended query (Parse/Bind/Execute) is one round trip: the client then
 * waits for the server's ReadyForQuery. Each is recorded with its SQL text, in order.
 */
import { connect, createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { closeTogether } from "./socket-pair.js"

/**
 * One round trip: a simple query's text, or the text of the statement an extended query ran
 * (parsed in it, or earlier on the same connection for a named prepared statement), and the
 * client connection it came on (numbered from 1 in the order they connected).
 */
export interface RoundTrip {
  readonly kind: "simple" | "extended"
  readonly text: string
  readonly connection: number
}

/** The proxy: a URL to connect through, what went through it, and its end. */
export interface RoundTripProxy {
  /** `url` with its host and port replaced by the proxy's. */
  readonly url: string
  /** Every round trip so far, on every connection, in the order the client sent them. */
  readonly roundTrips: Array<RoundTrip>
  readonly close: () => Promise<void>
}

const sslRequestCode = 80_877_103

/** Starts a proxy in front of the PostgreSQL server of `url` (a `postgres://` URL). */
export const startRoundTripProxy = async (url: string): Promise<RoundTripProxy> => {
  const target = new URL(url)
  const sockets = new Set<Socket>()
  const roundTrips: Array<RoundTrip> = []
  let connections = 0
  const server = createServer((client) => {
    const connection = ++connections
    /** Named prepared statements of this connection: name → text. */
    const prepared = new Map<string, string>()
    const upstream = connect(Number(target.port || 5432), target.hostname)
    sockets.add(client)
    sockets.add(upstream)
    let pending = Buffer.alloc(0)
    let started = false
    /** The texts run since the last Sync: parsed unnamed ones, or a named one bound. */
    let ran: Array<string> = []
    const cstring = (buffer: Buffer, from: number): [string, number] => {
      const end = buffer.indexOf(0, from)
      return [buffer.toString("utf8", from, end), end + 1]
    }
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk)
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        if (!started) {
          if (pending.length < 8) return
          const length = pending.readInt32BE(0)
          if (pending.length < length) return
          if (pending.readInt32BE(4) !== sslRequestCode) started = true
          pending = pending.subarray(length)
          continue
        }
        if (pending.length < 5) return
        const type = String.fromCharCode(pending[0]!)
        const length = pending.readInt32BE(1)
        if (pending.length < 1 + length) return
        const body = pending.subarray(5, 1 + length)
        if (type === "Q") roundTrips.push({ kind: "simple", text: cstring(body, 0)[0], connection })
        if (type === "P") {
          const [name, next] = cstring(body, 0)
          const text = cstring(body, next)[0]
          if (name === "") ran.push(text)
          else prepared.set(name, text)
        }
        if (type === "B") {
          const [, next] = cstring(body, 0)
          const name = cstring(body, next)[0]
          if (name !== "") ran.push(prepared.get(name) ?? name)
        }
        if (type === "S") {
          roundTrips.push({ kind: "extended", text: ran.join("; "), connection })
          ran = []
        }
        pending = pending.subarray(1 + length)
      }
    })
    upstream.on("data", (chunk: Buffer) => client.write(chunk))
    closeTogether(client, upstream, sockets)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const proxied = new URL(url)
  proxied.hostname = "127.0.0.1"
  proxied.port = String((server.address() as AddressInfo).port)
  return {
    url: proxied.toString(),
    roundTrips,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
