/**
 * A local https server standing in for the web sites that publish documents (OAuth client metadata
 * documents), over a real socket with the test certificate for `localhost` (`test-tls.ts`): each
 * path answers what the test set for it (status, headers, body, or no answer at all), and every
 * request is recorded.
 */
import { createServer, type Server } from "node:https"
import type { Socket } from "node:net"
import { testServerCertificate, testServerKey } from "./test-tls.js"

/** What one path answers; `hang` never answers. */
export interface DocumentAnswer {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  readonly hang?: boolean
}

/** A running document server. */
export interface DocumentServer {
  /** `https://127.0.0.1:<port>` (the test certificate names 127.0.0.1 and localhost). */
  readonly origin: string
  /** The paths asked for, in order. */
  readonly requests: Array<string>
  /** Sets what `path` answers (404 until set). */
  readonly set: (path: string, answer: DocumentAnswer) => void
  /** How many times `path` was asked for. */
  readonly hits: (path: string) => number
  readonly close: () => Promise<void>
}

/** Starts an https server on 127.0.0.1 answering what `set` says. */
export const startDocumentServer = async (): Promise<DocumentServer> => {
  const answers = new Map<string, DocumentAnswer>()
  const requests: Array<string> = []
  const sockets = new Set<Socket>()
  const server: Server = createServer({ cert: testServerCertificate, key: testServerKey }, (req, res) => {
    const path = req.url ?? ""
    requests.push(path)
    const answer = answers.get(path) ?? { status: 404, body: "not found" }
    if (answer.hang === true) return
    res.writeHead(answer.status ?? 200, { "content-type": "application/json", ...answer.headers })
    res.end(answer.body ?? "")
  })
  server.on("secureConnection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (address === null || typeof address === "string") return reject(new Error("no address"))
      resolve(address.port)
    })
  })
  return {
    origin: `https://127.0.0.1:${port}`,
    requests,
    set: (path, answer) => void answers.set(path, answer),
    hits: (path) => requests.filter((asked) => asked === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
