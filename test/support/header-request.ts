/**
 * One HTTP request over a real socket with headers `fetch` will not send as given (`Host`), for
 * the Origin and Host checks: node:http sends every header as written.
 */
import { request as httpRequest } from "node:http"

/** What came back: status, headers (lower-case names) and the body as text. */
export interface HeaderResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly text: string
}

/** Sends `method` to `path` on `origin` with exactly `headers` (a `host` among them replaces the socket's), and `body` if any. */
export const sendWithHeaders = (origin: string, method: string, path: string, headers: Readonly<Record<string, string>>, body?: string): Promise<HeaderResponse> =>
  new Promise((resolve, reject) => {
    const target = new URL(origin)
    const outgoing = httpRequest(
      {
        host: target.hostname.replace(/^\[|\]$/g, ""),
        port: Number(target.port),
        method,
        path,
        headers: { ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }), ...headers },
        agent: false
      },
      (incoming) => {
        const chunks: Array<Buffer> = []
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
        incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text: Buffer.concat(chunks).toString("utf8") }))
        incoming.on("error", reject)
      }
    )
    outgoing.on("error", reject)
    outgoing.end(body)
  })
