/** Small HTTP servers on 127.0.0.1 for SDK tests: a scripted fake API and a recording relay. */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** A request the fake server received, body read. */
export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: string
  readonly at: number
}

/** A running local server. */
export interface LocalServer {
  readonly baseUrl: string
  readonly close: () => Promise<void>
}

const listen = async (server: Server, path: string): Promise<LocalServer> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

/** A fake API answering each request with `respond(request, index)`; `received` records every request. */
export const startFakeApi = async (
  respond: (request: Received, index: number, res: ServerResponse) => void
): Promise<LocalServer & { readonly received: Received[] }> => {
  const received: Received[] = []
  const server = createServer(async (req, res) => {
    const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: await readBody(req), at: Date.now() }
    received.push(request)
    respond(request, received.length - 1, res)
  })
  return { ...(await listen(server, "/api/v1")), received }
}

/** Answers JSON with the given status and headers. */
export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_fake_${status}`, ...headers })
  res.end(JSON.stringify(body))
}

/** Forwards every request to `target` (an origin) and records each response's `X-Request-Id`. */
export const startRelay = async (target: string): Promise<LocalServer & { readonly requestIds: string[] }> => {
  const requestIds: string[] = []
  const server = createServer((req, res) => {
    const upstream = request(new URL(req.url ?? "/", target), { method: req.method, headers: req.headers }, (answer) => {
      requestIds.push(String(answer.headers["x-request-id"]))
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on("error", () => res.destroy())
    req.pipe(upstream)
  })
  return { ...(await listen(server, "/api/v1")), requestIds }
}
