/**
 * A local OpenAI-compatible server for tests: `POST /v1/chat/completions` answered from a script,
 * one scripted response per request, streamed as the real API streams (`data: {chunk}` server-sent
 * events of `chat.completion.chunk` objects, tool calls as indexed deltas, then `data: [DONE]`),
 * or, for a request without `stream: true`, as one `chat.completion` object sent once the script's
 * parts are over (waits delay it, `hang` never sends it, `end` sends it cut short, `drop` destroys
 * the connection), or an error status with the API's error body. It records every request and every response whose
 * connection closed before the response ended (a client that aborted).
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { sleep } from "./timing.js"

/** One part of a streamed answer. */
export type FakePart =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "tool"; readonly index: number; readonly id?: string; readonly name?: string; readonly arguments?: string }
  | { readonly kind: "wait"; readonly ms: number }
  /** Stops sending, leaving the stream open until the client goes away. */
  | { readonly kind: "hang" }
  /** Ends the response cleanly here, with no finishing chunk and no `[DONE]`. */
  | { readonly kind: "end" }
  /** Destroys the connection here. */
  | { readonly kind: "drop" }

/** One scripted response. */
export interface FakeResponse {
  /** 200 streams `parts`; any other status answers the error body. */
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** The error body's message. */
  readonly error?: string
  /** Wait before the status line and headers. */
  readonly headersDelayMs?: number
  readonly parts?: ReadonlyArray<FakePart>
  /** Default `tool_calls` when a part is a tool call, else `stop`. */
  readonly finish?: "stop" | "tool_calls" | "length"
  /**
   * Token counts reported as the API does: in a whole answer's `usage`, and in a streamed one as a
   * last chunk without choices when the request asked for it (`stream_options.include_usage`).
   */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number }
}

/** A request the server received. */
export interface SeenRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: any
  /** When it arrived (`Date.now()`). */
  readonly at: number
}

/** The server: its address for the `openai` client and what it saw. */
export interface FakeOpenAi {
  /** `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string
  readonly requests: Array<SeenRequest>
  /** Responses whose connection closed before they ended. */
  readonly aborted: Array<number>
  /** Resolves once a response's connection closed before it ended. */
  readonly nextAbort: () => Promise<number>
  readonly close: () => Promise<void>
}

/** A script: responses in request order, or a function of the request and its number (0-based). */
export type FakeScript = ReadonlyArray<FakeResponse> | ((request: SeenRequest, n: number) => FakeResponse)

/** A streamed answer of text pieces. */
export const say = (...texts: ReadonlyArray<string>): FakeResponse => ({ parts: texts.map((text) => ({ kind: "text", text })) })

/** A streamed answer calling one tool, its arguments split in two deltas as real providers do. */
export const callTool = (name: string, args: unknown, id = `call_${name}`): FakeResponse => {
  const json = JSON.stringify(args)
  const half = Math.floor(json.length / 2)
  return {
    parts: [
      { kind: "tool", index: 0, id, name, arguments: "" },
      { kind: "tool", index: 0, arguments: json.slice(0, half) },
      { kind: "tool", index: 0, arguments: json.slice(half) }
    ]
  }
}


const chunk = (model: string, delta: Record<string, unknown>, finish: string | null) => ({
  id: "chatcmpl-fake",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model,
  choices: [{ index: 0, delta, finish_reason: finish }]
})

const readBody = (request: import("node:http").IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Array<Buffer> = []
    request.on("data", (part: Buffer) => parts.push(part))
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
    request.on("error", reject)
  })

/** Answers `response` as one `chat.completion` object (a request without `stream: true`). */
const respondWhole = async (res: ServerResponse, response: FakeResponse, model: string, closed: () => boolean) => {
  let text = ""
  const calls = new Map<number, { id: string; name: string; arguments: string }>()
  let cut: "end" | "drop" | null = null
  for (const part of response.parts ?? []) {
    if (closed()) return
    if (part.kind === "wait") await sleep(part.ms)
    else if (part.kind === "hang") return
    else if (part.kind === "end" || part.kind === "drop") {
      cut = part.kind
      break
    } else if (part.kind === "text") text += part.text
    else {
      const call = calls.get(part.index) ?? { id: "", name: "", arguments: "" }
      calls.set(part.index, { id: part.id ?? call.id, name: part.name ?? call.name, arguments: call.arguments + (part.arguments ?? "") })
    }
  }
  if (closed()) return
  if (cut === "drop") return void res.destroy()
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }))
  const body = JSON.stringify({
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text, ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }) },
        finish_reason: response.finish ?? (toolCalls.length > 0 ? "tool_calls" : "stop")
      }
    ],
    ...(response.usage === undefined ? {} : { usage: { ...response.usage, total_tokens: response.usage.prompt_tokens + response.usage.completion_tokens } })
  })
  res.writeHead(200, { "content-type": "application/json", ...response.headers })
  res.end(cut === "end" ? body.slice(0, Math.floor(body.length / 2)) : body)
}

/** Starts the server on 127.0.0.1 with `script`. */
export const startFakeOpenAi = async (script: FakeScript): Promise<FakeOpenAi> => {
  const requests: Array<SeenRequest> = []
  const aborted: Array<number> = []
  const abortWaiters: Array<(n: number) => void> = []
  const sockets = new Set<Socket>()

  const respond = async (res: ServerResponse, seen: SeenRequest, n: number) => {
    const scripted = typeof script === "function" ? script(seen, n) : script[n]
    const response: FakeResponse = scripted ?? { status: 500, error: `fake: no response scripted for request ${n + 1}` }
    let closed = false
    res.on("close", () => {
      closed = true
      if (!res.writableFinished) {
        aborted.push(n)
        abortWaiters.splice(0).forEach((wake) => wake(n))
      }
    })
    if (response.headersDelayMs !== undefined) await sleep(response.headersDelayMs)
    if (closed) return
    const status = response.status ?? 200
    if (status !== 200) {
      res.writeHead(status, { "content-type": "application/json", ...response.headers })
      res.end(JSON.stringify({ error: { message: response.error ?? "fake failure", type: "server_error", code: null } }))
      return
    }
    const model = String(seen.body?.model ?? "")
    if (seen.body?.stream !== true) return respondWhole(res, response, model, () => closed)
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...response.headers })
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`)
    send(chunk(model, { role: "assistant", content: "" }, null))
    let calledTool = false
    for (const part of response.parts ?? []) {
      if (closed) return
      if (part.kind === "wait") await sleep(part.ms)
      else if (part.kind === "hang") return
      else if (part.kind === "end") return void res.end()
      else if (part.kind === "drop") return void res.destroy()
      else if (part.kind === "text") send(chunk(model, { content: part.text }, null))
      else {
        calledTool = true
        const fn = { ...(part.name === undefined ? {} : { name: part.name }), ...(part.arguments === undefined ? {} : { arguments: part.arguments }) }
        const call = { index: part.index, ...(part.id === undefined ? {} : { id: part.id, type: "function" }), function: fn }
        send(chunk(model, { tool_calls: [call] }, null))
      }
    }
    if (closed) return
    send(chunk(model, {}, response.finish ?? (calledTool ? "tool_calls" : "stop")))
    if (response.usage !== undefined && seen.body?.stream_options?.include_usage === true) {
      const usage = { ...response.usage, total_tokens: response.usage.prompt_tokens + response.usage.completion_tokens }
      send({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model, choices: [], usage })
    }
    res.end("data: [DONE]\n\n")
  }

  let count = 0
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req)
      const path = req.url ?? ""
      if (req.method !== "POST" || path !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: `fake: no route ${req.method} ${path}`, type: "invalid_request_error", code: null } }))
        return
      }
      const seen: SeenRequest = { path, headers: req.headers, body: JSON.parse(text), at: Date.now() }
      requests.push(seen)
      await respond(res, seen, count++)
    })().catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : new Error(String(error)))
    })
  })
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    aborted,
    nextAbort: () => new Promise<number>((resolve) => abortWaiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
