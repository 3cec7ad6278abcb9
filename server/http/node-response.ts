/**
 * Sends an `HttpServerResponse` on Node's `ServerResponse`, as the platform's Node server sends
 * what the router answers: its status, its headers with its cookies as `Set-Cookie`, then its body
 * (empty, a buffer or text, a readable, or a stream written chunk by chunk as the client takes it;
 * a stream that fails cuts the connection, so the client never takes a partial body for a whole one).
 * For the fast lane (`fast-lane.ts`), which answers without that server around it.
 */
import { Cookies, type HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import type { ServerResponse } from "node:http"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"

const headersOf = (response: HttpServerResponse.HttpServerResponse, extra: Readonly<Record<string, string>>) => {
  const headers: Record<string, string | Array<string>> = { ...response.headers, ...extra }
  if (!Cookies.isEmpty(response.cookies)) {
    const cookies = Cookies.toSetCookieHeaders(response.cookies)
    const own = headers["set-cookie"]
    headers["set-cookie"] = own === undefined ? cookies : cookies.concat(own)
  }
  return headers
}

/** Waits until `node` takes more after a write it buffered, or is closed. */
const drained = (node: ServerResponse) =>
  Effect.async<void>((resume) => {
    const done = () => {
      node.off("drain", done)
      node.off("close", done)
      resume(Effect.void)
    }
    node.once("drain", done)
    node.once("close", done)
  })

/** Writes `response` (with `extra` headers) to `node` and ends it; nothing when `node` already ended. */
export const sendResponse = (
  response: HttpServerResponse.HttpServerResponse,
  node: ServerResponse,
  extra: Readonly<Record<string, string>>
): Effect.Effect<void, unknown> =>
  Effect.suspend(() => {
    if (node.writableEnded) return Effect.void
    const body = response.body
    node.writeHead(response.status, headersOf(response, extra))
    switch (body._tag) {
      case "Empty":
        node.end()
        return Effect.void
      case "Uint8Array":
        node.end(body.body)
        return Effect.void
      case "Raw": {
        const raw = body.body as unknown
        if (raw instanceof Readable) return Effect.tryPromise((signal) => pipeline(raw, node, { signal }))
        node.end(raw as string | Uint8Array)
        return Effect.void
      }
      case "Stream":
        return Stream.runForEach(body.stream, (chunk) => (node.write(chunk) || node.destroyed ? Effect.void : drained(node))).pipe(
          Effect.onExit((exit) => Effect.sync(() => (exit._tag === "Success" ? node.end() : node.destroy())))
        )
      case "FormData":
        return Effect.dieMessage("the fast lane does not send form data")
    }
  })
