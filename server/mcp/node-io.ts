/**
 * Reading and answering a Node HTTP request for the MCP branch: the body within a byte limit, a
 * JSON answer, and the transport's web `Response` written to Node's `ServerResponse` (JSON at
 * once, an SSE stream as it comes, cancelled when the client goes away).
 */
import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * The request body as text, or null when it is over `limitBytes`. A body over the limit is still
 * read to its end and dropped (so the client sees the answer, not a reset) up to `drainBytes`,
 * where reading stops.
 */
export const readBody = (request: IncomingMessage, limitBytes: number, drainBytes: number): Promise<string | null> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limitBytes) return void chunks.push(chunk)
      chunks.length = 0
      if (size <= drainBytes) return
      request.off("data", onData)
      request.off("end", onEnd)
      resolve(null)
    }
    const onEnd = () => resolve(size > limitBytes ? null : chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))
    request.on("data", onData)
    request.once("end", onEnd)
    request.once("error", reject)
  })

/** Answers `body` as JSON with `status` and `headers`. */
export const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>>): void => {
  const text = JSON.stringify(body)
  response.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text)
}

/** Writes a web `Response` (the MCP transport's answer) to `response`, with `extraHeaders` added. */
export const sendWebResponse = async (web: Response, response: ServerResponse, extraHeaders: Readonly<Record<string, string>>): Promise<void> => {
  const headers: Record<string, string> = {}
  web.headers.forEach((value, name) => {
    headers[name] = value
  })
  Object.assign(headers, extraHeaders)
  if (web.body === null) return void response.writeHead(web.status, headers).end()
  if ((headers["content-type"] ?? "").startsWith("application/json")) {
    const text = await web.text()
    headers["content-length"] = String(Buffer.byteLength(text))
    return void response.writeHead(web.status, headers).end(text)
  }
  response.writeHead(web.status, headers)
  response.flushHeaders()
  const reader = web.body.getReader()
  response.once("close", () => void reader.cancel().catch(() => undefined))
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      response.write(value)
    }
  } finally {
    response.end()
  }
}
