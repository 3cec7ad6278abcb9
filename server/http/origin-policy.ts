/**
 * Which browser origins may reach the MCP server, the OAuth endpoints and the Portals (issue 23;
 * the Streamable HTTP transport's Security Warning: validate `Origin`, answer 403 when it is
 * present and not allowed). A pure decision on a request's `Origin` and `Host` headers:
 *
 * - No `Origin` passes: clients that are not browsers (the SDK, curl, `svc`) send none.
 * - Loopback origins pass, on any port and either scheme: `localhost`, `127.0.0.0/8`, `[::1]`.
 * - The server's own origin passes: an `Origin` naming the host the request's `Host` names (the
 *   Portal's and sign-in pages' own form posts, wherever the server is reached).
 * - Origins listed with `svc serve --allowed-origins` pass.
 * - Anything else is refused, `Origin: null` (sandboxed frames, opaque origins) included.
 *
 * DNS rebinding makes a hostile name point at this machine, so the hostile page's `Origin` and
 * `Host` name the same host. A server that listens on a loopback address therefore also checks
 * `Host` (as the MCP SDK's own guard does for loopback servers): it must name a loopback host or
 * the host of a listed origin. A `Host` that is no host at all (no browser sends one) is read as
 * absent, as the doors already read it (`request-url.ts`). A server listening on other addresses
 * was put on the network on purpose: its names are not known here, so `Host` is not checked.
 */
import { isIP } from "node:net"

/** What the decision needs to know about the server. */
export interface OriginPolicy {
  /** Whether `Host` must name a loopback host or a listed origin's host (a server on a loopback address). */
  readonly checksHost: boolean
  /** The listed origins, serialized (`scheme://host[:port]`). */
  readonly listed: ReadonlySet<string>
  /** The host names of the listed origins, for the `Host` check. */
  readonly listedHostnames: ReadonlySet<string>
}

/** A request that passes: `corsOrigin` is the origin to answer CORS headers to (null without `Origin`). */
export interface OriginAllowed {
  readonly allowed: true
  readonly corsOrigin: string | null
}

/** A request that is refused, and why, in one sentence for the person who sent it. */
export interface OriginRefused {
  readonly allowed: false
  readonly reason: string
}

/** The decision on one request. */
export type OriginVerdict = OriginAllowed | OriginRefused

/** Whether a URL's `hostname` (IPv6 in brackets) names this machine's loopback. */
export const isLoopbackHostname = (hostname: string): boolean => {
  const name = hostname.toLowerCase()
  if (name === "localhost" || name === "[::1]") return true
  return isIP(name) === 4 && name.startsWith("127.")
}

/** Whether a listen address (`--host`; 127.0.0.1 when none) is a loopback address. */
export const isLoopbackBind = (host: string | undefined): boolean => {
  if (host === undefined) return true
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return isLoopbackHostname(isIP(bare) === 6 ? `[${bare}]` : bare) || bare.toLowerCase() === "::ffff:127.0.0.1"
}

/**
 * `text` as a serialized origin when it is one an operator may list: `http` or `https`, a host,
 * an optional port, nothing else (a trailing `/` is tolerated); null otherwise.
 */
export const parseAllowedOrigin = (text: string): string | null => {
  const trimmed = text.trim()
  if (!/^https?:\/\/[^/?#@*\\\s]+\/?$/i.test(trimmed) || !URL.canParse(trimmed)) return null
  return new URL(trimmed).origin
}

/**
 * The policy of a server listening on `bindHost` with `allowedOrigins` listed; throws naming the
 * first entry that is not an origin (`parseAllowedOrigin`).
 */
export const originPolicy = (bindHost: string | undefined, allowedOrigins: ReadonlyArray<string>): OriginPolicy => {
  const listed = new Set<string>()
  for (const entry of allowedOrigins) {
    const origin = parseAllowedOrigin(entry)
    if (origin === null) throw new Error(`'${entry}' is not an origin: write scheme://host[:port], with http or https and nothing after the host.`)
    listed.add(origin)
  }
  return { checksHost: isLoopbackBind(bindHost), listed, listedHostnames: new Set([...listed].map((origin) => new URL(origin).hostname)) }
}

/** A header's value as it may be shown back, cut short. */
const shown = (value: string): string => (value.length > 100 ? `${value.slice(0, 100)}…` : value)

/** The host part of a `Host` header as a URL reads it, or null when it is no host. */
const hostOf = (header: string | undefined): URL | null =>
  header === undefined || header === "" || !URL.canParse(`http://${header}/`) ? null : new URL(`http://${header}/`)

/** The decision on a request with these `Origin` and `Host` headers. */
export const judgeOrigin = (policy: OriginPolicy, origin: string | undefined, host: string | undefined): OriginVerdict => {
  const requestHost = hostOf(host)
  if (policy.checksHost && requestHost !== null && !isLoopbackHostname(requestHost.hostname) && !policy.listedHostnames.has(requestHost.hostname)) {
    return {
      allowed: false,
      reason: `This server listens on a loopback address and is not reached as ${shown(requestHost.hostname)} (a guard against DNS rebinding); to serve under that name, list its origin with svc serve --allowed-origins.`
    }
  }
  if (origin === undefined) return { allowed: true, corsOrigin: null }
  const refused: OriginRefused = {
    allowed: false,
    reason: `Requests from the origin ${shown(origin)} are not allowed here; the server takes them from loopback origins, its own origin and those listed with svc serve --allowed-origins.`
  }
  if (origin === "null" || !URL.canParse(origin)) return refused
  const url = new URL(origin)
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== origin.toLowerCase()) return refused
  if (isLoopbackHostname(url.hostname) || policy.listed.has(url.origin) || (requestHost !== null && url.host === requestHost.host)) {
    return { allowed: true, corsOrigin: url.origin }
  }
  return refused
}
