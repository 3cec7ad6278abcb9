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

/** What reading a body within a limit found: its bytes, or that it was over the limit or broke off. */
export type BoundedBody = { readonly _tag: "Read"; readonly bytes: Buffer } | { readonly _tag: "TooLarge" } | { readonly _tag: "Broken" }

/**
 * Reads the request's body up to `maxBytes`. Over the limit, the remainder is drained (not reset)
 * so that a response can still reach the client.
 */
export const readBoundedBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.async<BoundedBody>((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let size = 0
    source.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBytes) chunks.push(chunk)
    })
    source.once("error", () => resume(Effect.succeed({ _tag: "Broken" })))
    source.once("end", () =>
      resume(Effect.succeed(size > maxBytes ? { _tag: "TooLarge" } : { _tag: "Read", bytes: Buffer.concat(chunks) }))
    )
  })

/**
 * Reads an unsized body up to `maxBytes`: `true` when it fit (and is now the request's text),
 * `false` when it was over the limit (the remainder is drained so a response can still be sent).
 */
export const readUnsizedBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.map(readBoundedBody(request, maxBytes), (body) => {
    if (body._tag !== "Read") return false
    // The platform caches the body text here on first read; priming it hands over what we read.
    ;(request as unknown as { textEffect: Effect.Effect<string> }).textEffect = Effect.succeed(body.bytes.toString("utf8"))
    return true
  })
