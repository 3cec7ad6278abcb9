/**
 * An `HttpServerRequest` over a Node request whose body the fast lane (`fast-lane.ts`) has already
 * read whole: the body effects answer from that buffer, everything else from the Node request. A
 * route the lane runs reads it exactly as it reads the router's request. The lane only takes JSON
 * bodies, so the multipart and upgrade members, which no such route reads, fail as the platform's
 * own request fails for a body it cannot read.
 */
import {
  Cookies,
  type Headers,
  HttpIncomingMessage,
  type HttpMethod,
  HttpServerError,
  HttpServerRequest,
  type Multipart,
  type Socket,
  UrlParams
} from "@effect/platform"
import { Effect, Inspectable, Option, Stream } from "effect"
import type { IncomingMessage } from "node:http"

/** A request read whole: its Node message, its body and the URL the route sees. */
export class LaneRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly headers: Headers.Headers
  readonly method: HttpMethod.HttpMethod
  readonly originalUrl: string
  private parsedCookies: Record<string, string> | undefined

  constructor(
    readonly source: IncomingMessage,
    readonly body: Buffer,
    readonly url: string,
    headers?: Headers.Headers,
    private readonly address?: string | undefined
  ) {
    super()
    this.headers = headers ?? (source.headers as Headers.Headers)
    this.method = (source.method ?? "GET").toUpperCase() as HttpMethod.HttpMethod
    this.originalUrl = source.url ?? url
  }

  private fail(cause: unknown) {
    return new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
  }

  get remoteAddress(): Option.Option<string> {
    return Option.fromNullable(this.address ?? this.source.socket?.remoteAddress)
  }

  get cookies(): Record<string, string> {
    return (this.parsedCookies ??= Cookies.parseHeader(this.headers["cookie"] ?? ""))
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.succeed(this.body.toString("utf8"))
  }

  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.try({ try: () => JSON.parse(this.body.toString("utf8")) as unknown, catch: (cause) => this.fail(cause) })
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(this.body.toString("utf8"))), catch: (cause) => this.fail(cause) })
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.succeed(this.body.buffer.slice(this.body.byteOffset, this.body.byteOffset + this.body.byteLength) as ArrayBuffer)
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return this.body.length === 0 ? Stream.empty : Stream.succeed(new Uint8Array(this.body))
  }

  get multipart(): Effect.Effect<Multipart.Persisted, Multipart.MultipartError> {
    return Effect.dieMessage("the fast lane takes JSON bodies only")
  }

  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return Stream.dieMessage("the fast lane takes JSON bodies only")
  }

  get upgrade(): Effect.Effect<Socket.Socket, HttpServerError.RequestError> {
    return Effect.fail(this.fail("the fast lane does not upgrade connections"))
  }

  modify(options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }): HttpServerRequest.HttpServerRequest {
    return new LaneRequest(this.source, this.body, options.url ?? this.url, options.headers ?? this.headers, options.remoteAddress ?? this.address)
  }

  toJSON(): unknown {
    return { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl }
  }
}
