/**
 * A local HTTP server standing in for the web (for `url` sources and fetched documents), over a
 * real socket, recording what it was asked and how many connections it accepted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"

/** A local HTTP server for `url` sources, recording what it was asked. */
export interface WebServer {
  readonly host: string
  readonly port: number
  readonly origin: string
  readonly requests: Array<{ readonly method: string; readonly url: string }>
  /** TCP connections accepted so far. */
  connections: number
  readonly close: () => Promise<void>
}

/** Starts an HTTP server on `host` (default 127.0.0.1) answering with `handler`. */
export const startWebServer = async (
  handler: (req: IncomingMessage, res: ServerResponse, web: WebServer) => void,
  host = "127.0.0.1"
): Promise<WebServer> => {
  const sockets = new Set<Socket>()
  const requests: Array<{ method: string; url: string }> = []
  let web: WebServer | undefined
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "" })
    handler(req, res, web!)
  })
  server.on("connection", (socket: Socket) => {
    web!.connections++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => {
      const address = server.address()
      if (address === null || typeof address === "string") return reject(new Error("no address"))
      resolve(address.port)
    })
  })
  web = {
    host,
    port,
    origin: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    requests,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  return web
}
