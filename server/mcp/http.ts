/**
 * The MCP server over Streamable HTTP at `{mcp_url}` (`/mcp`) and at `{base_url}/orgs/<slug>/mcp`,
 * on the same Node server as the REST API: a branch in front of the API's router. Every request is
 * authenticated again (`auth.ts`); a connection (MCP session) belongs to the key and address that
 * opened it, and its tool list is rebuilt for the caller before each request (`session.ts`).
 * Without a valid token the answer is 401 with `WWW-Authenticate: Bearer resource_metadata=…`, and
 * the protected-resource metadata (RFC 9728) is served under `/.well-known/`.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { type ApiFailure, InvalidRequest, NotFound, PayloadTooLarge } from "../platform/errors.js"
import { envelopeBody, isApiFailure, statusOfTag } from "../platform/http/error-catalog.js"
import { maxRequestBodyBytes } from "../platform/http/limits.js"
import { newRequestId } from "../platform/http/request-middleware.js"
import { requestOrigin, requestUrl } from "../platform/http/request-url.js"
import { apiPrefix } from "../platform/http/contract.js"
import { type McpAddress, authenticateMcp, runsAllowedFor } from "./auth.js"
import { parseFamilies } from "./families.js"
import { McpSession, type McpServices } from "./session.js"

/** The path of the protected-resource metadata (RFC 9728). */
export const protectedResourcePath = "/.well-known/oauth-protected-resource"

/** Connections idle longer than this are closed. */
const idleConnectionMs = 60 * 60_000

/** The most open connections per key; opening one more closes the key's least recently used. */
export const connectionsPerKeyMax = 50

const workspacePattern = new RegExp(`^${apiPrefix}/orgs/([^/]+)/mcp/?$`)

/** The MCP address a path names, or null. */
export const mcpAddressOf = (path: string): McpAddress | null => {
  if (path === "/mcp" || path === "/mcp/") return { kind: "any" }
  const match = workspacePattern.exec(path)
  return match ? { kind: "workspace", slug: decodeURIComponent(match[1]!) } : null
}

const addressKey = (address: McpAddress) => (address.kind === "any" ? "*" : address.slug)

/** The origin clients reached this server at. */

/** RFC 9728 metadata of an MCP address; the authorization server is this server (`sign-in/http.ts`). */
const resourceMetadata = (origin: string, resourcePath: string) => ({
  resource: `${origin}${resourcePath}`,
  authorization_servers: [origin],
  bearer_methods_supported: ["header"],
  resource_name: "svc MCP server",
  resource_documentation: `${origin}${apiPrefix}/openapi.json`
})

const failure = (error: ApiFailure, origin: string, address: McpAddress | null) => {
  const status = statusOfTag.get(error._tag) ?? 500
  const headers: Record<string, string> = { "x-request-id": newRequestId() }
  if (status === 401 && address !== null) {
    const metadata = `${origin}${protectedResourcePath}${address.kind === "any" ? "/mcp" : `${apiPrefix}/orgs/${encodeURIComponent(address.slug)}/mcp`}`
    headers["www-authenticate"] = `Bearer resource_metadata="${metadata}"${error.code === "unauthorized" ? "" : `, error="invalid_token", error_description="${error.message.replace(/[^\x20-\x7e]|"/g, "")}"`}`
  }
  if (error._tag === "RateLimited") headers["retry-after"] = String(error.retryAfterSeconds)
  return HttpServerResponse.unsafeJson(envelopeBody(error), { status, headers })
}

interface Connection {
  readonly session: McpSession
  readonly transport: WebStandardStreamableHTTPServerTransport
  readonly keyId: string
  readonly address: string
}

/** The MCP branch: answers MCP addresses and the metadata, passes everything else to the API. */
export const McpHttpLive = HttpApiBuilder.middleware(
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<McpServices>()
    const connections = new Map<string, Connection>()
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.allSettled([...connections.values()].map((connection) => connection.transport.close())))
    )

    const closeIdle = () => {
      const now = Date.now()
      for (const [id, connection] of connections) {
        if (now - connection.session.lastUsed > idleConnectionMs) {
          connections.delete(id)
          void connection.transport.close()
        }
      }
    }

    const open = async (keyId: string, address: McpAddress) => {
      closeIdle()
      const owned = [...connections].filter(([, connection]) => connection.keyId === keyId)
      if (owned.length >= connectionsPerKeyMax) {
        const [id, oldest] = owned.reduce((a, b) => (b[1].session.lastUsed < a[1].session.lastUsed ? b : a))
        connections.delete(id)
        void oldest.transport.close()
      }
      const session = new McpSession(`mcp_${randomUUID().replace(/-/g, "")}`, runtime)
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => void connections.set(id, { session, transport, keyId, address: addressKey(address) }),
        onsessionclosed: (id) => void connections.delete(id)
      })
      transport.onclose = () => {
        if (transport.sessionId) connections.delete(transport.sessionId)
      }
      return { session, transport }
    }

    const serve = (request: HttpServerRequest.HttpServerRequest, address: McpAddress, url: URL) =>
      Effect.gen(function* () {
        const origin = requestOrigin(request)
        const families = parseFamilies(url.searchParams.get("tools"))
        if (families instanceof InvalidRequest) return failure(families, origin, address)
        const authenticated = yield* Effect.either(Effect.provide(authenticateMcp(request.headers["authorization"], address), runtime))
        if (authenticated._tag === "Left") return failure(authenticated.left, origin, address)
        const declared = Number(request.headers["content-length"] ?? 0)
        if (declared > maxRequestBodyBytes) {
          return failure(new PayloadTooLarge({ message: `The request body is over the ${maxRequestBodyBytes / 1_000_000} MB limit.` }), origin, address)
        }
        let parsedBody: unknown = undefined
        if (request.method === "POST") {
          const text = yield* Effect.either(request.text)
          if (text._tag === "Left") return failure(new PayloadTooLarge({ message: "The request body could not be read within the limit." }), origin, address)
          try {
            parsedBody = JSON.parse(text.right)
          } catch {
            return failure(new InvalidRequest({ message: "The request body is not valid JSON." }), origin, address)
          }
        }
        const principal = authenticated.right
        const sessionId = request.headers["mcp-session-id"]
        let connection: { session: McpSession; transport: WebStandardStreamableHTTPServerTransport }
        if (sessionId !== undefined) {
          const known = connections.get(sessionId)
          if (!known || known.keyId !== principal.key.id || known.address !== addressKey(address)) {
            return failure(new NotFound({ message: "No such MCP session for this key and address; initialize a new one." }), origin, address)
          }
          connection = known
        } else if (request.method === "POST") {
          connection = yield* Effect.promise(() => open(principal.key.id, address))
        } else {
          return failure(new InvalidRequest({ message: "Mcp-Session-Id: this request needs the session's id (initialize first with POST)." }), origin, address)
        }
        const { session, transport } = connection
        const call = { principal: { ...principal, connectionId: session.connectionId }, families, runsAllowed: runsAllowedFor(principal) }
        yield* Effect.promise(() => session.refresh(call))
        if (!session.server.isConnected()) yield* Effect.promise(() => session.connect(transport))
        const webRequest = new Request(url, { method: request.method, headers: request.headers as Record<string, string> })
        const response = yield* Effect.promise(() => transport.handleRequest(webRequest, { parsedBody }))
        response.headers.set("x-request-id", newRequestId())
        if (!(response.headers.get("content-type") ?? "").startsWith("application/json")) return HttpServerResponse.fromWeb(response)
        const text = yield* Effect.promise(() => response.text())
        return HttpServerResponse.text(text, { status: response.status, headers: Object.fromEntries(response.headers), contentType: "application/json" })
      })

    return (app) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const url = requestUrl(request)
        if (url.pathname === protectedResourcePath || url.pathname.startsWith(`${protectedResourcePath}/`)) {
          const resourcePath = url.pathname.slice(protectedResourcePath.length) || "/mcp"
          if (mcpAddressOf(resourcePath) === null || request.method !== "GET") return yield* app
          return HttpServerResponse.unsafeJson(resourceMetadata(requestOrigin(request), resourcePath), { headers: { "x-request-id": newRequestId() } })
        }
        const address = mcpAddressOf(url.pathname)
        if (address === null) return yield* app
        return yield* serve(request, address, url).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.as(
              Effect.logError("MCP request failed", defect),
              failure(isApiFailure(defect) ? defect : new InvalidRequest({ message: "The MCP request could not be served." }), requestOrigin(request), address)
            )
          )
        )
      })
  })
)

