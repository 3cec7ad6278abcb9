/**
 * The one place where `Origin` (and, on a loopback server, `Host`) is checked and CORS is
 * answered: a front branch (`front-branch.ts`) put before every other, so it sees each request
 * before the MCP branch, the fast lane, the OAuth endpoints, the Portal and the API's router.
 *
 * A request to a guarded door (`GuardedDoor`: the MCP addresses, `/.well-known/*`, `/oauth/*`, the
 * Portals) that the origin policy refuses (`origin-policy.ts`) is answered 403 by the door's own
 * refusal (its error shape) and goes no further: nothing is read, counted or written. A door
 * that takes CORS answers an allowed origin's preflight (`OPTIONS` with `Origin`) with 204 and the
 * methods, headers and max-age below; its other answers to an allowed origin carry
 * `Access-Control-Allow-Origin` (that origin) and `Access-Control-Expose-Headers`, set here before
 * the door writes. `Vary: Origin` is on all of that door's answers. No credentials are allowed
 * (the doors take bearer tokens, never cookies, across origins). Every other request passes
 * untouched.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { FrontBranch } from "./front-branch.js"
import { type OriginPolicy, judgeOrigin } from "./origin-policy.js"
import { plainRequestPath, requestUrl } from "./request-url.js"

/** A group of addresses whose requests the guard checks, and how it refuses one. */
export interface GuardedDoor {
  /** Whether browsers of allowed origins get CORS answers here (preflights and exposed headers). */
  readonly cors: boolean
  /** Answers a refused request with 403 in the door's error shape; `reason` is one sentence. */
  readonly refuse: (response: ServerResponse, reason: string) => void
}

/** The door a request path (decoded, dot segments resolved) belongs to, or null when the guard lets it be. */
export type DoorOf = (pathname: string) => GuardedDoor | null

/** The methods a preflight allows: those of the MCP transport and the OAuth endpoints. */
export const corsAllowedMethods = "GET, POST, DELETE, OPTIONS"

/** The request headers a preflight allows: what MCP clients and OAuth clients send. */
export const corsAllowedHeaders =
  "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name"

/** The response headers a browser client may read. */
export const corsExposedHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, X-Request-Id"

/** How long, in seconds, a browser may keep a preflight's answer (two hours: Chromium's cap). */
export const corsMaxAgeSeconds = 7200

/** The request's path as the doors read it: the plain path when it is one, else the parsed URL's. */
const pathOf = (request: IncomingMessage): string => plainRequestPath(request.url) ?? requestUrl(request).pathname

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/** The guard, as a front branch: refuses, answers a preflight, or adds CORS headers and passes on. */
export const originGuard =
  (policy: OriginPolicy, doorOf: DoorOf): FrontBranch =>
  (request: IncomingMessage, response: ServerResponse): boolean => {
    const door = doorOf(pathOf(request))
    if (door === null) return false
    const verdict = judgeOrigin(policy, header(request, "origin"), header(request, "host"))
    if (!verdict.allowed) {
      response.setHeader("connection", "close")
      door.refuse(response, verdict.reason)
      return true
    }
    if (!door.cors) return false
    response.setHeader("vary", "Origin")
    if (verdict.corsOrigin === null) return false
    response.setHeader("access-control-allow-origin", verdict.corsOrigin)
    if (request.method === "OPTIONS") {
      response.writeHead(204, {
        "access-control-allow-methods": corsAllowedMethods,
        "access-control-allow-headers": corsAllowedHeaders,
        "access-control-max-age": String(corsMaxAgeSeconds)
      })
      response.end()
      return true
    }
    response.setHeader("access-control-expose-headers", corsExposedHeaders)
    return false
  }
