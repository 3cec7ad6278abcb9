/**
 * The MCP server over Streamable HTTP at `{mcp_url}` (`/mcp`) and at `{base_url}/orgs/<slug>/mcp`,
 * on the same Node server as the REST API: a front branch (`front-branch.ts`) that answers these
 * addresses from Node's request directly, before Effect's HTTP stack and the API's router. Every
 * request is authenticated again (`auth.ts`); a connection (MCP session) belongs to the key and
 * address that opened it, and its tool list is rebuilt for the caller before each request
 * (`session.ts`). Without a valid token the answer is 401 with
 * `WWW-Authenticate: Bearer resource_metadata=…`, and the protected-resource metadata (RFC 9728) is
 * served under `/.well-known/`. Every answer carries an `X-Request-Id` and, under `svc serve`, its
 * request-log line.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { type ApiFailure, InvalidRequest, NotFound, PayloadTooLarge } from "../platform/errors.js"
import { envelopeBody, isApiFailure, statusOfTag } from "../platform/request/error-catalog.js"
import type { FrontBranches } from "../http/front-branch.js"
import { drainLimitBytes, maxRequestBodyBytes } from "../http/limits.js"
import { requestIdOf } from "../http/request-intake.js"
import { decodedSegment, plainRequestPath, requestOrigin, requestUrl } from "../http/request-url.js"
import { apiPrefix } from "../http/contract.js"
import { type McpAddress, authenticateMcp, runsAllowedFor } from "./auth.js"
import { addressPath, mcpScope, scopesSupported } from "../identity/mcp-sign-in/domain.js"
import { type FamilyName, parseFamilies } from "./families.js"
import { readBody, sendJson, sendWebResponse } from "./node-io.js"
import { listFingerprint } from "./registry.js"
import { McpSession, type McpServices } from "./session.js"
import { SessionTransport } from "./session-transport.js"
/** The path of the protected-resource metadata (RFC 9728). */
export const protectedResourcePath = "/.well-known/oauth-protected-resource"

/** Connections idle longer than this are closed. */
const idleConnectionMs = 60 * 60_000

/** The most open connections per key; opening one more closes the key's least recently used. */
export const connectionsPerKeyMax = 50

const workspacePattern = new RegExp(`^${apiPrefix}/orgs/([^/]+)/mcp/?$`)

/** The MCP address a path names, or null (a slug whose escapes are malformed names none). */
export const mcpAddressOf = (path: string): McpAddress | null => {
  if (path === "/mcp" || path === "/mcp/") return { kind: "any" }
  const match = workspacePattern.exec(path)
  const slug = match ? decodedSegment(match[1]!) : null
  return slug === null ? null : { kind: "workspace", slug }
}

const addressKey = (address: McpAddress) => (address.kind === "any" ? "*" : address.slug)

/** RFC 9728 metadata of an MCP address; the authorization server is this server (`sign-in/http.ts`). */
const resourceMetadata = (origin: string, resourcePath: string) => ({
  resource: `${origin}${resourcePath}`,
  authorization_servers: [origin],
  scopes_supported: scopesSupported,
  bearer_methods_supported: ["header"],
  resource_name: "svc MCP server",
  resource_documentation: `${origin}${apiPrefix}/openapi.json`
})

/** A message as a quoted-string parameter of `WWW-Authenticate` (printable ASCII, no quotes). */
const headerText = (message: string) => message.replace(/[^\x20-\x7e]|"|\\/g, "")

/**
 * Answers `error` as its REST envelope. A 401 names the address's metadata in `WWW-Authenticate`;
 * a 403 `insufficient_scope` (an organization key) carries the challenge of the MCP authorization
 * spec: the scope a connection needs (`mcp`, a person's sign-in) and the same metadata.
 */
const sendFailure = (response: ServerResponse, error: ApiFailure, origin: string, address: McpAddress, requestId: string) => {
  const status = statusOfTag.get(error._tag) ?? 500
  const headers: Record<string, string> = { "x-request-id": requestId }
  const metadata = `${origin}${protectedResourcePath}${addressPath(address)}`
  if (status === 401) {
    headers["www-authenticate"] = `Bearer resource_metadata="${metadata}"${error.code === "unauthorized" ? "" : `, error="invalid_token", error_description="${headerText(error.message)}"`}`
  }
  if (error._tag === "InsufficientScope") {
    headers["www-authenticate"] = `Bearer error="insufficient_scope", scope="${mcpScope}", resource_metadata="${metadata}", error_description="${headerText(error.message)}"`
  }
  if (error._tag === "RateLimited") headers["retry-after"] = String(error.retryAfterSeconds)
  if (error._tag === "PayloadTooLarge") headers["connection"] = "close"
  sendJson(response, status, envelopeBody(error), headers)
}

/**
 * The caller of a request and the fingerprint of the tool list it gets (`listFingerprint`), read
 * in one run: the connection rebuilds its tools only when the fingerprint changed.
 */
const callerOf = (authorization: string | undefined, address: McpAddress, families: ReadonlySet<FamilyName>) =>
  Effect.flatMap(authenticateMcp(authorization, address), (principal) =>
    Effect.map(listFingerprint({ principal, families, runsAllowed: runsAllowedFor(principal) }), (fingerprint) => ({ principal, fingerprint }))
  )

interface Connection {
  readonly session: McpSession
  readonly transport: SessionTransport
  readonly keyId: string
  readonly address: string
}

/**
 * The MCP branch, put in front of the API on `front` for as long as the layer lives: answers MCP
 * addresses and their metadata, leaves everything else to the API. Its connections close with it.
 */
export const McpBranchLive = (front: FrontBranches): Layer.Layer<never, never, McpServices> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<McpServices>()
      const connections = new Map<string, Connection>()

      const closeIdle = () => {
        const now = Date.now()
        for (const [id, connection] of connections) {
          if (now - connection.session.lastUsed > idleConnectionMs) {
            connections.delete(id)
            void connection.transport.close()
          }
        }
      }

      const open = (keyId: string, address: McpAddress) => {
        closeIdle()
        const owned = [...connections].filter(([, connection]) => connection.keyId === keyId)
        if (owned.length >= connectionsPerKeyMax) {
          const [id, oldest] = owned.reduce((a, b) => (b[1].session.lastUsed < a[1].session.lastUsed ? b : a))
          connections.delete(id)
          void oldest.transport.close()
        }
        const session = new McpSession(`mcp_${randomUUID().replace(/-/g, "")}`, runtime)
        const transport: SessionTransport = new SessionTransport(
          new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            enableJsonResponse: true,
            onsessioninitialized: (id) => void connections.set(id, { session, transport, keyId, address: addressKey(address) }),
            onsessionclosed: (id) => void connections.delete(id)
          })
        )
        transport.onclose = () => {
          if (transport.sessionId) connections.delete(transport.sessionId)
        }
        return { session, transport }
      }

      const serve = async (request: IncomingMessage, response: ServerResponse, address: McpAddress, url: URL, requestId: string) => {
        const origin = requestOrigin(request)
        const fail = (error: ApiFailure) => sendFailure(response, error, origin, address, requestId)
        const families = parseFamilies(url.searchParams.get("tools"))
        if (families instanceof InvalidRequest) return fail(families)
        const authenticated = await Runtime.runPromiseExit(runtime)(callerOf(request.headers["authorization"], address, families))
        if (Exit.isFailure(authenticated)) {
          const failure = Cause.failureOption(authenticated.cause)
          if (failure._tag === "Some") return fail(failure.value)
          throw Cause.squash(authenticated.cause)
        }
        const { principal, fingerprint } = authenticated.value
        const tooLarge = () => fail(new PayloadTooLarge({ message: `The request body is over the ${maxRequestBodyBytes / 1_000_000} MB limit.` }))
        const declared = Number(request.headers["content-length"] ?? 0)
        if (declared > drainLimitBytes) return tooLarge()
        let parsedBody: unknown = undefined
        if (request.method === "POST" || declared > maxRequestBodyBytes) {
          const text = await readBody(request, maxRequestBodyBytes, drainLimitBytes)
          if (text === null) return tooLarge()
          try {
            parsedBody = JSON.parse(text)
          } catch {
            return fail(new InvalidRequest({ message: "The request body is not valid JSON." }))
          }
        }
        const sessionId = request.headers["mcp-session-id"]
        let connection: { session: McpSession; transport: SessionTransport }
        if (sessionId !== undefined) {
          const known = typeof sessionId === "string" ? connections.get(sessionId) : undefined
          if (!known || known.keyId !== principal.key.id || known.address !== addressKey(address)) {
            return fail(new NotFound({ message: "No such MCP session for this key and address; initialize a new one." }))
          }
          connection = known
        } else if (request.method === "POST") {
          connection = open(principal.key.id, address)
        } else {
          return fail(new InvalidRequest({ message: "Mcp-Session-Id: this request needs the session's id (initialize first with POST)." }))
        }
        const { session, transport } = connection
        const call = { principal: { ...principal, connectionId: session.connectionId }, families, runsAllowed: runsAllowedFor(principal) }
        await session.refresh(call, fingerprint)
        if (!session.server.isConnected()) await session.connect(transport)
        const plain = transport.plainCall(request.method, request.headers, parsedBody)
        if (plain !== null) {
          const answer = await transport.call(plain, request.headers, url)
          return sendJson(response, 200, answer, { "mcp-session-id": transport.sessionId ?? "", "x-request-id": requestId })
        }
        const webRequest = new Request(url, { method: request.method ?? "GET", headers: request.headers as Record<string, string> })
        const answer = await transport.http.handleRequest(webRequest, { parsedBody })
        await sendWebResponse(answer, response, { "x-request-id": requestId })
      }

      const handle = (request: IncomingMessage, response: ServerResponse): boolean => {
        const path = plainRequestPath(request.url)
        if (path !== null && !path.startsWith(protectedResourcePath) && mcpAddressOf(path) === null) return false
        const url = requestUrl(request)
        if (url.pathname === protectedResourcePath || url.pathname.startsWith(`${protectedResourcePath}/`)) {
          const resourcePath = url.pathname.slice(protectedResourcePath.length) || "/mcp"
          if (mcpAddressOf(resourcePath) === null || request.method !== "GET") return false
          const requestId = requestIdOf(request)
          sendJson(response, 200, resourceMetadata(requestOrigin(request), resourcePath), { "x-request-id": requestId })
          return true
        }
        const address = mcpAddressOf(url.pathname)
        if (address === null) return false
        const requestId = requestIdOf(request)
        serve(request, response, address, url, requestId).catch((defect: unknown) => {
          Runtime.runFork(runtime)(Effect.logError("MCP request failed", defect))
          if (response.headersSent) return void response.destroy()
          const error = isApiFailure(defect) ? defect : new InvalidRequest({ message: "The MCP request could not be served." })
          sendFailure(response, error, requestOrigin(request), address, requestId)
        })
        return true
      }

      const remove = front.add(handle)
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => {
          remove()
          return Promise.allSettled([...connections.values()].map((connection) => connection.transport.close()))
        })
      )
    })
  )
