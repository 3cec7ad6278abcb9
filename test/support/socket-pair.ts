/** The two sockets of one proxied connection, closed together. */
import type { Socket } from "node:net"

/**
 * Closes `client` and `upstream` together when either closes or fails, and forgets both from
 * `open` (the proxy's open sockets, destroyed when it closes).
 */
export const closeTogether = (client: Socket, upstream: Socket, open: Set<Socket>): void => {
  const close = () => {
    client.destroy()
    upstream.destroy()
    open.delete(client)
    open.delete(upstream)
  }
  client.on("close", close)
  upstream.on("close", close)
  client.on("error", close)
  upstream.on("error", close)
}
