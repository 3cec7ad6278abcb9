/**
 * The MCP server over Streamable HTTP at `{mcp_url}` (`/mcp`) and at `{base_url}/orgs/<slug>/mcp`,
 * on the same Node server as the REST API: a front branch (`front-branch.ts`) that answers these
 * addresses from Node's request directly, before Effect's HTTP stack and the API's router. Every
 * request is authenticated again (`auth.ts`); a connection (MCP session) belongs to the key and
 * address that opened it, and its tool list is rebuilt for the caller before each request
 * (`session.ts`). On PostgreSQL a session is served by any instance (`session-store.ts`): one that
 * does not hold it builds it again from the stored `initialize`. Without a valid token the answer is 401 with
 * `WWW-Authenticate: Bearer resource_metadata=…`, and the protected-resource metadata (RFC 9728) is
 * served under `/.well-known/`. Every answer carries an `X-Request-Id` and, under `svc serve`, its
 * request-log line.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
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
import { mcpSessionStore } from "./session-store.js"
import type { CallContext } from "../mcp-door/tool.js"
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

/** The connection id of a session (activity is recorded per connection): the same on every instance that serves it. */
const connectionIdOf = (sessionId: string) => `mcp_${sessionId.replace(/-/g, "")}`

/** The params of the `initialize` request in a body (one message or a batch), stored to build the session again elsewhere. */
const initializeParams = (body: unknown): unknown => {
  const messages: Array<unknown> = Array.isArray(body) ? body : [body]
  const found = messages.find((message) => isInitializeRequest(message))
  return found === undefined ? {} : (found as { params?: unknown }).params
}

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
      const store = yield* mcpSessionStore
      /** Sessions being built again from the store here, by id (concurrent requests of one session share the work). */
      const restoring = new Map<string, Promise<Connection | null>>()
      const run = <A>(effect: Effect.Effect<A, never, McpServices>) => Runtime.runPromise(runtime)(effect)
      /** Drops this instance's objects of a session (the session itself lives on in the store, if shared). */
      const forget = (id: string) => {
        const connection = connections.get(id)
        if (connection === undefined) return
        connections.delete(id)
        void connection.transport.close()
      }

      const closeIdle = () => {
        const now = Date.now()
        for (const [id, connection] of connections) {
          if (now - connection.session.lastUsed > idleConnectionMs) {
            connections.delete(id)
            void connection.transport.close()
          }
        }
      }

      /**
       * A new connection's objects. `initialize` is the params of the request that opens it, stored
       * (when shared) before its id is answered; `restored` names a stored session built again here.
       */
      const open = (keyId: string, address: McpAddress, opening: { readonly initialize: unknown } | { readonly restored: string }) => {
        closeIdle()
        const owned = [...connections].filter(([, connection]) => connection.keyId === keyId)
        if (owned.length >= connectionsPerKeyMax) {
          const [id, oldest] = owned.reduce((a, b) => (b[1].session.lastUsed < a[1].session.lastUsed ? b : a))
          connections.delete(id)
          void oldest.transport.close()
        }
        const sessionId = "restored" in opening ? opening.restored : randomUUID()
        // One connection id per session, whichever instance serves it (activity is recorded per connection).
        const session = new McpSession(connectionIdOf(sessionId), runtime)
        const transport: SessionTransport = new SessionTransport(
          new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => sessionId,
            enableJsonResponse: true,
            onsessioninitialized: async (id) => {
              connections.set(id, { session, transport, keyId, address: addressKey(address) })
              if ("restored" in opening) return
              for (const trimmed of await run(store.opened(id, keyId, addressKey(address), opening.initialize, connectionsPerKeyMax))) forget(trimmed)
            },
            onsessionclosed: async (id) => {
              connections.delete(id)
              await run(store.closed(id))
            }
          })
        )
        transport.onclose = () => {
          const id = transport.sessionId
          if (id !== undefined && connections.get(id)?.transport === transport) connections.delete(id)
        }
        return { session, transport }
      }

      /**
       * Builds a stored session again on this instance: a connection whose SDK server and transport
       * are initialized by replaying the stored `initialize` (its answer discarded). Null when the
       * replay did not open it.
       */
      const restore = (id: string, keyId: string, address: McpAddress, initialize: string, call: CallContext, fingerprint: string, url: URL) => {
        const pending = restoring.get(id)
        if (pending !== undefined) return pending
        const built = (async (): Promise<Connection | null> => {
          const { session, transport } = open(keyId, address, { restored: id })
          await session.refresh(call, fingerprint)
          await session.connect(transport)
          const replay = new Request(url, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: JSON.parse(initialize) })
          })
          await (await transport.http.handleRequest(replay)).text()
          return connections.get(id) ?? null
        })().finally(() => restoring.delete(id))
        restoring.set(id, built)
        return built
      }

      /**
       * The connection of a request's session, or null (404): this instance's, checked against the
       * store when shared (deleted or expired elsewhere: dropped here too), else the stored one built
       * again here; always one opened by the request's key at its address.
       */
      const sessionConnection = async (id: string, keyId: string, address: McpAddress, call: CallContext, fingerprint: string, url: URL) => {
        const owns = (connection: { readonly keyId: string; readonly address: string }) => connection.keyId === keyId && connection.address === addressKey(address)
        const known = connections.get(id)
        if (!store.shared) return known !== undefined && owns(known) ? known : null
        const stored = await run(store.lookup(id, idleConnectionMs))
        if (stored === null) {
          forget(id)
          return null
        }
        if (!owns(stored)) return null
        if (known !== undefined) return owns(known) ? known : null
        return restore(id, keyId, address, stored.initialize, call, fingerprint, url)
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
        const callOf = (connectionId: string): CallContext => ({ principal: { ...principal, connectionId }, families, runsAllowed: runsAllowedFor(principal) })
        let connection: { session: McpSession; transport: SessionTransport }
        if (sessionId !== undefined) {
          const known =
            typeof sessionId === "string"
              ? await sessionConnection(sessionId, principal.key.id, address, callOf(connectionIdOf(sessionId)), fingerprint, url)
              : null
          if (known === null) return fail(new NotFound({ message: "No such MCP session for this key and address; initialize a new one." }))
          connection = known
        } else if (request.method === "POST") {
          connection = open(principal.key.id, address, { initialize: initializeParams(parsedBody) })
        } else {
          return fail(new InvalidRequest({ message: "Mcp-Session-Id: this request needs the session's id (initialize first with POST)." }))
        }
        const { session, transport } = connection
        const call = callOf(session.connectionId)
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
