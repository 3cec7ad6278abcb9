/**
 * The request body limit for bodies sent without `Content-Length` (chunked). The platform's reader
 * destroys the socket when its limit is hit, so the client would never see the 413; instead such a
 * body is read here within the limit (the rest is drained, not reset), and the text is handed to the
 * platform's request so handlers decode it as usual.
 */
import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import { drainLimitBytes, maxRequestBodyBytes } from "./limits.js"

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

/**
 * Whether the request's body is within the request limit (`maxRequestBodyBytes`), for every door
 * that answers an oversized body itself (the API's middleware, the Portal): an unsized body is read
 * within the limit (and becomes the request's text); a body declared over it, up to
 * `drainLimitBytes`, is read and dropped first, so the client sees the 413 instead of a reset.
 */
export const bodyWithinLimit = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const declaredLength = Number(request.headers["content-length"] ?? 0)
    const fits = declaredLength <= maxRequestBodyBytes && (!hasUnsizedBody(request) || (yield* readUnsizedBody(request, maxRequestBodyBytes)))
    if (declaredLength > maxRequestBodyBytes && declaredLength <= drainLimitBytes) yield* readUnsizedBody(request, 0)
    return fits
  })
