/**
 * The address a request was sent to, for the branches served in front of the API router (MCP,
 * Portals): built from the Host header when it is a host, else this machine's loopback, so a
 * malformed Host header never turns into a failure of the whole server.
 */
import type { HttpServerRequest } from "@effect/platform"

const fallbackOrigin = "http://127.0.0.1"

/** `http://` and the request's Host header, or the loopback origin when Host is missing or no host. */
export const requestOrigin = (request: HttpServerRequest.HttpServerRequest): string => {
  const host = request.headers["host"]
  return host !== undefined && host !== "" && URL.canParse(`http://${host}/`) ? `http://${host}` : fallbackOrigin
}

/** The request's URL against its origin (`/` when the request target is no URL at all). */
export const requestUrl = (request: HttpServerRequest.HttpServerRequest): URL => {
  const origin = requestOrigin(request)
  return URL.canParse(request.url, origin) ? new URL(request.url, origin) : new URL("/", origin)
}
