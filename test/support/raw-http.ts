/**
 * HTTP over a bare TCP socket, for requests `fetch` cannot make faithfully: a chunked body with no
 * `Content-Length`, read back even when the server closes the connection early.
 */
import { connect, type Socket } from "node:net"

/** What came back: the parsed response if one arrived, and the socket error if any. */
export interface RawResponse {
  readonly status: number | null
  readonly headers: Record<string, string>
  readonly body: string
  /** The socket error seen (e.g. `ECONNRESET`), or null. */
  readonly socketError: string | null
}

const parse = (raw: Buffer, socketError: string | null): RawResponse => {
  const text = raw.toString("latin1")
  const end = text.indexOf("\r\n\r\n")
  if (end < 0) return { status: null, headers: {}, body: "", socketError }
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = raw.subarray(Buffer.byteLength(text.slice(0, end + 4), "latin1"))
  if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
    const parts: Array<Buffer> = []
    let rest = body
    for (;;) {
      const lineEnd = rest.indexOf("\r\n")
      if (lineEnd < 0) break
      const size = parseInt(rest.subarray(0, lineEnd).toString(), 16)
      if (!(size > 0)) break
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size))
      rest = rest.subarray(lineEnd + 2 + size + 2)
    }
    body = Buffer.concat(parts)
  }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? NaN)
  return { status: Number.isNaN(status) ? null : status, headers, body: body.toString("utf8"), socketError }
}

/**
 * Connects to `origin`, lets `send` write the request once connected, and resolves with what came
 * back once the server closes the connection, or after `timeoutMs` (then `timedOut` is true).
 */
const exchange = (
  origin: string,
  send: (socket: Socket) => void | Promise<void>,
  timeoutMs: number
): Promise<RawResponse & { readonly timedOut: boolean }> =>
  new Promise((resolve) => {
    const target = new URL(origin)
    const socket = connect(Number(target.port), target.hostname)
    const received: Array<Buffer> = []
    let socketError: string | null = null
    let timedOut = false
    let settled = false
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ ...parse(Buffer.concat(received), socketError), timedOut })
    }
    const timer = setTimeout(() => {
      timedOut = true
      finish()
    }, timeoutMs)
    socket.on("data", (data: Buffer) => received.push(data))
    socket.on("error", (error: NodeJS.ErrnoException) => {
      socketError = error.code ?? error.message
    })
    socket.on("close", finish)
    socket.on("connect", () => void send(socket))
  })

/**
 * Sends `POST url` with `Transfer-Encoding: chunked` and the given chunks (then the final empty
 * chunk), and resolves with whatever the server answered once it closes the connection, or after
 * `timeoutMs`.
 */
export const postChunked = (
  url: string,
  headers: Record<string, string>,
  chunks: Iterable<string>,
  timeoutMs = 10_000
): Promise<RawResponse> => {
  const target = new URL(url)
  return exchange(
    url,
    async (socket) => {
      const head = Object.entries({ ...headers, host: target.host, "transfer-encoding": "chunked", connection: "close" })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("")
      socket.write(`POST ${target.pathname}${target.search} HTTP/1.1\r\n${head}\r\n`)
      for (const chunk of chunks) {
        if (socket.destroyed) return
        const size = Buffer.byteLength(chunk)
        if (!socket.write(`${size.toString(16)}\r\n${chunk}\r\n`)) {
          await new Promise((resume) => {
            socket.once("drain", resume)
            socket.once("close", resume)
          })
        }
      }
      if (!socket.destroyed) socket.write("0\r\n\r\n")
    },
    timeoutMs
  )
}

/**
 * Sends `head` (the request line and headers, without the blank line) and `body` exactly as given,
 * with a `Content-Length` of the body's size unless `head` has one, and resolves with what came
 * back once the server closes the connection, or after `timeoutMs` (then `timedOut` is true).
 */
export const sendRaw = (
  origin: string,
  head: string,
  body: string | Uint8Array = "",
  timeoutMs = 5_000
): Promise<RawResponse & { readonly timedOut: boolean }> =>
  exchange(
    origin,
    (socket) => {
      const bytes = Buffer.from(body)
      const length = /\r\ncontent-length:/i.test(`\r\n${head}`) ? "" : `content-length: ${bytes.byteLength}\r\n`
      socket.write(`${head.replace(/\r\n$/, "")}\r\n${length}connection: close\r\n\r\n`)
      socket.write(bytes)
    },
    timeoutMs
  )
