/**
 * The request body limit for bodies sent without `Content-Length` (chunked). The platform's reader
 * destroys the socket when its limit is hit, so the client would never see the 413; instead such a
 * body is read here within the limit (the rest is drained, not reset), and the text is handed to the
 * platform's request so handlers decode it as usual.
 */
import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"

/** Whether the request streams a body of unknown length. */
export const hasUnsizedBody = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["content-length"] === undefined &&
  request.headers["transfer-encoding"] !== undefined &&
  !(request.headers["content-type"] ?? "").startsWith("multipart/")

/**
 * Reads an unsized body up to `maxBytes`: `true` when it fit (and is now the request's text),
 * `false` when it was over the limit (the remainder is drained so a response can still be sent).
 */
export const readUnsizedBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.async<boolean>((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let size = 0
    let over = false
    source.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) over = true
      if (!over) chunks.push(chunk)
    })
    source.once("error", () => resume(Effect.succeed(false)))
    source.once("end", () => {
      if (!over) {
        // The platform caches the body text here on first read; priming it hands over what we read.
        ;(request as unknown as { textEffect: Effect.Effect<string> }).textEffect = Effect.succeed(
          Buffer.concat(chunks).toString("utf8")
        )
      }
      resume(Effect.succeed(!over))
    })
  })
