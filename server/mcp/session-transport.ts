/**
 * The transport of one MCP connection over HTTP: the SDK's Streamable HTTP transport
 * (`WebStandardStreamableHTTPServerTransport`, JSON answers) for everything, except the plain call
 * that nearly every request is: a POST of one JSON-RPC request (not `initialize`) in an open
 * session, accepting JSON and SSE, with a JSON body and a supported or absent protocol version.
 * That call goes to the SDK's server (`McpServer`, the protocol) directly and its response comes
 * back as one JSON answer, the same one the SDK's transport would give, without building web
 * `Request`/`Response` objects and streams around it. Anything else, malformed or unusual requests
 * included, is the SDK transport's to answer.
 */
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS
} from "@modelcontextprotocol/sdk/types.js"
import type { IncomingHttpHeaders } from "node:http"

/** Whether a header value names JSON as the body's media type (parameters ignored). */
const isJsonMediaType = (value: string | undefined): boolean =>
  value !== undefined && value.split(";", 1)[0]!.trim().toLowerCase() === "application/json"

/** A connection's transport: the SDK's, with plain calls answered around it. */
export class SessionTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined
  /** Plain calls waiting for their response, by JSON-RPC id. */
  private readonly waiting = new Map<RequestId, (response: JSONRPCMessage) => void>()

  constructor(readonly http: WebStandardStreamableHTTPServerTransport) {
    http.onclose = () => {
      for (const [id, answer] of this.waiting) answer({ jsonrpc: "2.0", id, error: { code: ErrorCode.ConnectionClosed, message: "Connection closed" } })
      this.waiting.clear()
      this.onclose?.()
    }
    http.onerror = (error) => this.onerror?.(error)
    http.onmessage = (message, extra) => this.onmessage?.(message, extra)
  }

  get sessionId(): string | undefined {
    return this.http.sessionId
  }

  start(): Promise<void> {
    return this.http.start()
  }

  close(): Promise<void> {
    return this.http.close()
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ("id" in message && ("result" in message || "error" in message) && message.id !== undefined) {
      const answer = this.waiting.get(message.id)
      if (answer !== undefined) {
        this.waiting.delete(message.id)
        answer(message)
        return Promise.resolve()
      }
    }
    return this.http.send(message, options?.relatedRequestId === undefined ? undefined : { relatedRequestId: options.relatedRequestId })
  }

  /**
   * The JSON-RPC request of a plain call (see the module's comment), or null when the SDK's
   * transport is to answer the request.
   */
  plainCall(method: string | undefined, headers: IncomingHttpHeaders, body: unknown): JSONRPCRequest | null {
    if (method !== "POST" || this.http.sessionId === undefined || headers["mcp-session-id"] !== this.http.sessionId) return null
    const accept = headers.accept
    if (accept === undefined || !accept.includes("application/json") || !accept.includes("text/event-stream")) return null
    if (!isJsonMediaType(headers["content-type"])) return null
    const version = headers["mcp-protocol-version"]
    if (version !== undefined && (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return null
    if (typeof body !== "object" || body === null || Array.isArray(body) || !isJSONRPCRequest(body)) return null
    if (body.method === "initialize" || this.waiting.has(body.id)) return null
    return body
  }

  /** Hands a plain call to the server; resolves with its response (a result or a JSON-RPC error). */
  call(request: JSONRPCRequest, headers: IncomingHttpHeaders, url: URL): Promise<JSONRPCMessage> {
    return new Promise((resolve) => {
      this.waiting.set(request.id, resolve)
      this.onmessage?.(request, { requestInfo: { headers, url } })
    })
  }
}
