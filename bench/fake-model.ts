/**
 * An OpenAI-compatible chat completions endpoint for the runs benchmark: it answers every request
 * at once with one short answer (model `instant`; streamed as one delta, or whole when the request
 * does not ask for a stream), or sends one delta and then holds the stream open until the client
 * goes away (model `hold`), so the benchmark measures the server's own cost per turn and what an
 * open stream holds.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

const chunk = (model: string, delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }]
  })}\n\n`

const whole = (model: string) =>
  JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: "Within 30 days of delivery." }, finish_reason: "stop" }]
  })

/** A running fake model server; `baseUrl` ends in `/v1`. */
export interface FakeModel {
  readonly baseUrl: string
  /** Streams currently held open by model `hold`. */
  readonly held: () => number
  readonly close: () => Promise<void>
}

/** Starts the fake model on a free loopback port. */
export const startFakeModel = async (): Promise<FakeModel> => {
  let held = 0
  const server: Server = createServer((request, response) => {
    let body = ""
    request.on("data", (data: Buffer) => (body += data.toString()))
    request.on("end", () => {
      const asked = JSON.parse(body || "{}") as { model?: string; stream?: boolean }
      const model = asked.model ?? "instant"
      if (asked.stream !== true && model !== "hold") {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(whole(model))
        return
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      response.write(chunk(model, { role: "assistant", content: "Within 30 days of delivery." }, null))
      if (model === "hold") {
        held++
        response.on("close", () => held--)
        return
      }
      response.end(`${chunk(model, {}, "stop")}data: [DONE]\n\n`)
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    held: () => held,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
