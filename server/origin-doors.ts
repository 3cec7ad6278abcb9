/**
 * The doors the origin guard (`http/origin-guard.ts`) checks, each with its refusal in its own
 * error shape (issue 23):
 *
 * - the MCP addresses (`/mcp`, `{base_url}/orgs/<slug>/mcp`): a JSON-RPC error (-32000, id null),
 *   as the MCP SDK's own guard answers, since MCP clients read JSON-RPC; CORS taken;
 * - `/.well-known/*` and the OAuth endpoints under `/oauth/`: the OAuth error shape,
 *   `{ error: "access_denied", error_description }`; CORS taken;
 * - the sign-in pages (`/oauth/authorize`) and the Portals (`/portals/*`): the Portal's plain page;
 *   no CORS (pages for the browser's own navigation, read by no script of another origin).
 *
 * The REST API (`/api/v1/*` but its MCP addresses) is not guarded: it takes keys, never cookies.
 */
import type { ServerResponse } from "node:http"
import { mcpAddressOf } from "./mcp/http.js"
import type { DoorOf, GuardedDoor } from "./http/origin-guard.js"
import { originRefusedPage } from "./portal/pages/refused.js"

const send = (response: ServerResponse, type: string, body: string, headers: Readonly<Record<string, string>> = {}) =>
  void response.writeHead(403, { ...headers, "content-type": type, "content-length": String(Buffer.byteLength(body)) }).end(body)

/** The MCP addresses: a JSON-RPC error body. */
const mcpDoor: GuardedDoor = {
  cors: true,
  refuse: (response, reason) =>
    send(response, "application/json", JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: `Forbidden: ${reason}` }, id: null }))
}

/** The metadata documents and the OAuth endpoints: the OAuth error shape. */
const oauthDoor: GuardedDoor = {
  cors: true,
  refuse: (response, reason) =>
    send(response, "application/json", JSON.stringify({ error: "access_denied", error_description: reason }), { "cache-control": "no-store" })
}

/** Pages people open in a browser: the Portal's plain page, with the Portal's security headers. */
const pageDoor: GuardedDoor = {
  cors: false,
  refuse: (response, reason) =>
    send(response, "text/html; charset=utf-8", originRefusedPage(reason), {
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "same-origin"
    })
}

/** The door of a request path, or null for the addresses the guard lets be (the REST API, anything unknown). */
export const guardedDoorOf: DoorOf = (pathname) => {
  if (pathname.startsWith("/portals/") || pathname === "/oauth/authorize") return pageDoor
  if (pathname.startsWith("/oauth/") || pathname.startsWith("/.well-known/")) return oauthDoor
  if (!pathname.endsWith("/mcp") && !pathname.endsWith("/mcp/")) return null
  try {
    return mcpAddressOf(pathname) === null ? null : mcpDoor
  } catch {
    return mcpDoor // a slug that does not decode: still an MCP address, which the MCP branch refuses
  }
}
