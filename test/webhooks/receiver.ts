/** A local webhook receiver on a real socket: it records each request's raw body and headers and answers as told. */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** One request the receiver got. */
export interface Received {
  readonly rawBody: string
  readonly headers: IncomingHttpHeaders
}

/** A running receiver. */
export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** Sets the statuses of the next requests, in order; once used up, it answers 200. */
  readonly answer: (...statuses: ReadonlyArray<number>) => void
  /** Resolves once `n` requests in all have arrived. */
  readonly waitFor: (n: number, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** Starts a receiver on 127.0.0.1. */
export const startReceiver = async (): Promise<Receiver> => {
  const received: Array<Received> = []
  let statuses: Array<number> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received.push({ rawBody: Buffer.concat(chunks).toString("utf8"), headers: request.headers })
      response.writeHead(statuses.shift() ?? 200, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer: (...next) => {
      statuses = [...next]
    },
    waitFor: async (n, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests, not ${n}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
