/**
 * A local OpenAI-compatible embedding server for tests, on a real socket: `POST /v1/embeddings`
 * answers one deterministic vector per input, a hashed bag of words in 256 dimensions where
 * synonyms share a word (`automobile`, `vehicle` and `car` are one word), so texts about the same
 * thing in different words are near. It counts requests and inputs, can answer scripted failures
 * (`failNext`) and can refuse every request (`setDown`), and stops with `close`.
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo, Socket } from "node:net"

/** Dimensions of every vector. */
export const fakeDimensions = 256

/** Words that stand for the same thing; each maps to the first word of its group. */
const synonymGroups: ReadonlyArray<ReadonlyArray<string>> = [
  ["car", "automobile", "vehicle", "auto"],
  ["maintenance", "upkeep", "servicing", "care"],
  ["doctor", "physician", "clinician"],
  ["buy", "purchase", "acquire"],
  ["money", "cash", "funds"]
]
const canonical = new Map(synonymGroups.flatMap((group) => group.map((word) => [word, group[0]!] as const)))
const ignored = new Set(["a", "an", "the", "of", "to", "and", "in", "on", "for", "is", "every", "with", "how", "what", "my", "your"])

/** FNV-1a of a word: its dimension. */
const dimensionOf = (word: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193) >>> 0
  return hash % fakeDimensions
}

/** The fake's vector of `text` (not normalized; svc normalizes). */
export const fakeVector = (text: string): Array<number> => {
  const vector = new Array<number>(fakeDimensions).fill(0)
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (ignored.has(raw)) continue
    vector[dimensionOf(canonical.get(raw) ?? raw)]! += 1
  }
  return vector
}

/** One request the server received. */
export interface SeenEmbeddingRequest {
  readonly headers: IncomingHttpHeaders
  readonly model: string
  readonly input: ReadonlyArray<string>
  /** The status it was answered with. */
  readonly status: number
}

/** The server and what it saw. */
export interface FakeEmbeddings {
  /** `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string
  readonly requests: Array<SeenEmbeddingRequest>
  /** The next `count` requests answer `status` with an error body. */
  readonly failNext: (count: number, status: number) => void
  /** While down, every request answers 503. */
  readonly setDown: (down: boolean) => void
  /** Inputs embedded successfully so far. */
  readonly embeddedInputs: () => Array<string>
  readonly close: () => Promise<void>
}

/** Starts the server on an ephemeral loopback port. */
export const startFakeEmbeddings = async (): Promise<FakeEmbeddings> => {
  const requests: Array<SeenEmbeddingRequest> = []
  let failures: Array<number> = []
  let down = false
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(body))
      }
      if (req.method !== "POST" || req.url !== "/v1/embeddings") return answer(404, { error: { message: "not found" } })
      let body: any
      try {
        body = JSON.parse(Buffer.concat(parts).toString("utf8"))
      } catch {
        return answer(400, { error: { message: "invalid JSON" } })
      }
      const input: Array<string> = typeof body.input === "string" ? [body.input] : Array.isArray(body.input) ? body.input : []
      const status = down ? 503 : (failures.shift() ?? 200)
      requests.push({ headers: req.headers, model: String(body.model), input, status })
      if (status !== 200) return answer(status, { error: { message: `scripted failure ${status}`, type: "server_error" } })
      answer(200, {
        object: "list",
        model: body.model,
        data: input.map((text, index) => ({ object: "embedding", index, embedding: fakeVector(text) })),
        usage: { prompt_tokens: input.length, total_tokens: input.length }
      })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext: (count, status) => {
      failures = [...failures, ...Array.from({ length: count }, () => status)]
    },
    setDown: (value) => {
      down = value
    },
    embeddedInputs: () => requests.filter((request) => request.status === 200).flatMap((request) => request.input),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
