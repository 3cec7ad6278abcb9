/**
 * The address a request was sent to, for the branches served in front of the API router (MCP,
 * Portals): built from the Host header when it is a host, else this machine's loopback, so a
 * malformed Host header never turns into a failure of the whole server. Takes Effect's
 * `HttpServerRequest` and Node's `IncomingMessage` alike.
 */

const fallbackOrigin = "http://127.0.0.1"

/** What these helpers read of a request: its headers and its request target. */
export interface RequestTarget {
  readonly headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined }
  readonly url?: string | undefined
}

/** `http://` and the request's Host header, or the loopback origin when Host is missing or no host. */
export const requestOrigin = (request: RequestTarget): string => {
  const host = request.headers["host"]
  return typeof host === "string" && host !== "" && URL.canParse(`http://${host}/`) ? `http://${host}` : fallbackOrigin
}

/** The request's URL against its origin (`/` when the request target is no URL at all). */
export const requestUrl = (request: RequestTarget): URL => {
  const origin = requestOrigin(request)
  const target = request.url ?? "/"
  return URL.canParse(target, origin) ? new URL(target, origin) : new URL("/", origin)
}

const plainPath = /^\/(?!\/)[^?#%\\]*(?:\?|$)/
const dotSegment = /\/\.\.?(?:\/|\?|$)/

/**
 * The path of a request target that is a plain origin-form path (starts with one `/`, no percent
 * escapes, backslashes or dot segments), read without parsing a URL; null for anything else, which
 * `requestUrl` must read (it decodes and normalises). Lets the branches in front of the API tell
 * in a few string operations that a request is not theirs.
 */
export const plainRequestPath = (target: string | undefined): string | null => {
  if (target === undefined || !plainPath.test(target) || dotSegment.test(target)) return null
  const query = target.indexOf("?")
  return query < 0 ? target : target.slice(0, query)
}

/** A percent-encoded path segment decoded, or null when its escapes are malformed (`%zz`, a lone `%E2`). */
export const decodedSegment = (segment: string): string | null => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return null
  }
}
