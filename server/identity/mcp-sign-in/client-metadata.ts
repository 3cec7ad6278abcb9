/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the registration
 * the MCP authorization spec of 2025-11-25 recommends): a `client_id` that is an https URL names
 * the JSON document that describes the client. The rules of such a URL, how long a fetched
 * document is trusted (its `Cache-Control`, within bounds), and the settings of the fetch. Pure;
 * the fetch and the cache are `server/mcp/sign-in/client-documents.ts`.
 */
import { Context } from "effect"

/** How client metadata documents are fetched and kept. */
export interface ClientMetadataSettingsShape {
  /** `svc serve --allow-private-urls`: documents on loopback and private addresses may be fetched (local development, tests). */
  readonly allowPrivate: boolean
  /** Certificate authorities (PEM) trusted instead of the system's; tests give their own. */
  readonly ca?: string | undefined
  /** Time limit of one fetch. */
  readonly timeoutMs: number
  /** Largest document read. */
  readonly maxBytes: number
  /** A document is used this long at least before it is fetched again, whatever its `Cache-Control`. */
  readonly minCacheMs: number
  /** A document is used this long at most before it is fetched again. */
  readonly maxCacheMs: number
  /** How long a document without `max-age` is used. */
  readonly defaultCacheMs: number
  /** The most documents kept at once. */
  readonly maxEntries: number
}

/** The defaults: public https addresses only, 5 s, 5 KB, kept 1 minute to 24 hours (5 minutes without `max-age`). */
export const defaultClientMetadataSettings: ClientMetadataSettingsShape = {
  allowPrivate: false,
  timeoutMs: 5_000,
  maxBytes: 5 * 1024,
  minCacheMs: 60_000,
  maxCacheMs: 24 * 60 * 60_000,
  defaultCacheMs: 5 * 60_000,
  maxEntries: 1_000
}

/** The settings in force: the defaults unless the server's core provides others (`svc serve --allow-private-urls`, tests). */
export class ClientMetadataSettings extends Context.Reference<ClientMetadataSettings>()("svc/ClientMetadataSettings", {
  defaultValue: (): ClientMetadataSettingsShape => defaultClientMetadataSettings
}) {}

/** Whether a `client_id` is a URL, so names a metadata document (registered clients' ids are UUIDs, which never parse as one). */
export const isClientIdUrl = (clientId: string): boolean => URL.canParse(clientId)

const dotSegment = /\/(?:\.|%2e){1,2}(?:[/?]|$)/i

/**
 * Why a URL `client_id` cannot name a metadata document, or null: it must be https with a path,
 * without a fragment, a user name or password, or `.`/`..` segments, and written in its normal
 * form (the document's `client_id` is compared with it as a plain string).
 */
export const clientIdUrlProblem = (clientId: string): string | null => {
  if (clientId.length > 2048) return "it is longer than 2048 characters"
  const url = new URL(clientId)
  if (url.protocol !== "https:") return "it is not an https URL"
  if (clientId.includes("#")) return "it has a fragment"
  if (url.username !== "" || url.password !== "") return "it carries a user name or password"
  if (dotSegment.test(clientId.slice(url.protocol.length + 2 + url.host.length))) return "its path has . or .. segments"
  if (url.pathname === "/" || url.pathname === "") return "it has no path (the document's address is https://host/path)"
  if (url.href !== clientId) return `it is not written in its normal form (${url.href})`
  return null
}

/** Whether a response's `Content-Type` is JSON (`application/json` or `application/<something>+json`). */
export const isJsonContentType = (contentType: string | null): boolean => {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type)
}

/**
 * How long a document fetched with `cacheControl` is used before it is fetched again: its
 * `max-age` (`no-store`, `no-cache` count as 0) within the settings' bounds, the default without one.
 */
export const cacheMsOf = (cacheControl: string | null, settings: ClientMetadataSettingsShape): number => {
  const directives = (cacheControl ?? "").toLowerCase().split(",").map((part) => part.trim())
  const maxAge = directives.find((d) => d.startsWith("max-age="))
  const seconds = directives.includes("no-store") || directives.includes("no-cache") ? 0 : maxAge === undefined ? null : Number(maxAge.slice("max-age=".length))
  const wanted = seconds === null || !Number.isFinite(seconds) || seconds < 0 ? settings.defaultCacheMs : seconds * 1000
  return Math.min(settings.maxCacheMs, Math.max(settings.minCacheMs, wanted))
}
