/**
 * Clients named by a Client ID Metadata Document: the document fetched from the `client_id` URL
 * through the SSRF-safe fetcher (https only, public addresses unless private URLs are allowed, no
 * redirects followed, 5 KB and 5 s at most), checked (its `client_id` the URL itself, redirect URIs
 * by the registration rules, a public client), and kept in memory for as long as its
 * `Cache-Control` says within bounds (`identity/mcp-sign-in/client-metadata.ts`). Nothing is
 * written here: the client's row is recorded when an authorization code is issued to it.
 */
import { OAuthClientMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js"
import { Data, Effect } from "effect"
import { AppClock } from "../../platform/clock.js"
import { type FetchRefused, safeFetchEffect, type SafeFetchResult } from "../../platform/net/safe-fetch.js"
import {
  cacheMsOf,
  ClientMetadataSettings,
  type ClientMetadataSettingsShape,
  clientIdUrlProblem,
  isJsonContentType
} from "../../identity/mcp-sign-in/client-metadata.js"
import { type OAuthClient, redirectUriProblem } from "../../identity/mcp-sign-in/domain.js"

/** Why the metadata document a `client_id` URL names cannot be used; `reason` completes "… cannot be used: ". */
export class ClientDocumentRefused extends Data.TaggedError("ClientDocumentRefused")<{ readonly clientId: string; readonly reason: string }> {}

/** A client described by its metadata document: the client as the endpoints see it, and the document as registration metadata. */
export interface DocumentClient {
  readonly client: OAuthClient
  readonly metadata: Readonly<Record<string, unknown>>
}

const secretMethods = new Set(["client_secret_basic", "client_secret_post", "client_secret_jwt"])

/** The client a fetched document describes, or why it cannot be used. */
export const clientOfDocument = (clientId: string, fetched: Pick<SafeFetchResult, "contentType" | "bytes">): DocumentClient | string => {
  if (!isJsonContentType(fetched.contentType)) return `the document is served as ${fetched.contentType ?? "no content type"}, not application/json`
  let body: unknown
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fetched.bytes))
  } catch {
    return "the document is not valid JSON"
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "the document is not a JSON object"
  const raw = body as Record<string, unknown>
  if (raw["client_id"] !== clientId) return "the document's client_id is not the URL it was fetched from"
  if ("client_secret" in raw || "client_secret_expires_at" in raw) return "the document holds a client secret, which a published document cannot keep"
  const parsed = OAuthClientMetadataSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    return `the document's ${issue?.path.join(".") || "metadata"} is not valid: ${issue?.message ?? "invalid"}`
  }
  const metadata = parsed.data
  if (metadata.redirect_uris.length === 0) return "the document lists no redirect_uris"
  const problem = metadata.redirect_uris.map(redirectUriProblem).find((p) => p !== null)
  if (problem !== undefined && problem !== null) return `the document's redirect_uris: ${problem}`
  const method = metadata.token_endpoint_auth_method ?? "none"
  if (method !== "none") {
    return secretMethods.has(method)
      ? `token_endpoint_auth_method ${method} needs a shared secret, which a published document cannot keep`
      : `token_endpoint_auth_method ${method} is not supported here: only public clients (none) with PKCE`
  }
  const grant = (metadata.grant_types ?? []).find((g) => g !== "authorization_code" && g !== "refresh_token")
  if (grant !== undefined) return `the document's grant_types: '${grant}' is not supported`
  if ((metadata.response_types ?? []).some((type) => type !== "code")) return "the document's response_types: only 'code' is supported"
  const name = (metadata.client_name ?? "").trim().slice(0, 100) || new URL(clientId).host
  return {
    client: { id: clientId, name, redirectUris: metadata.redirect_uris },
    metadata: { ...metadata, client_id: clientId, client_name: name, token_endpoint_auth_method: "none" }
  }
}

/** What a refused fetch says, as the end of "… cannot be used: ". */
const fetchProblem = (refused: FetchRefused): string => {
  switch (refused.reason) {
    case "too_many_redirects":
      return "its address answered with a redirect, and redirects are not followed"
    case "http_status":
      return `its address answered with HTTP status ${refused.status ?? "?"}, not 200`
    case "too_large":
      return "the document is over the 5 KB limit"
    default:
      return `the document could not be fetched (${refused.message.replace(/\.$/, "")})`
  }
}

/** A kept document and until when it is used. */
interface Kept {
  readonly found: DocumentClient
  readonly until: number
}

/** Fetches, checks and keeps client metadata documents. */
export class ClientDocuments extends Effect.Service<ClientDocuments>()("svc/ClientDocuments", {
  effect: Effect.gen(function* () {
    const clock = yield* AppClock
    const kept = new Map<string, Kept>()

    const keep = (clientId: string, found: DocumentClient, until: number, settings: ClientMetadataSettingsShape) => {
      const now = clock.now()
      if (kept.size >= settings.maxEntries) for (const [id, entry] of kept) if (entry.until <= now) kept.delete(id)
      while (kept.size >= settings.maxEntries) kept.delete(kept.keys().next().value!)
      kept.delete(clientId)
      kept.set(clientId, { found, until })
    }

    const fetchDocument = (clientId: string, settings: ClientMetadataSettingsShape) =>
      safeFetchEffect(clientId, {
        allowPrivate: settings.allowPrivate,
        maxBytes: settings.maxBytes,
        timeoutMs: settings.timeoutMs,
        maxRedirects: 0,
        userAgent: "svc (OAuth client metadata)",
        ca: settings.ca
      }).pipe(Effect.mapError((refused) => new ClientDocumentRefused({ clientId, reason: fetchProblem(refused) })))

    return {
      /**
       * The client the document at `clientId` describes: the kept one while it is fresh, else
       * fetched and checked again. Refused (nothing kept) when the URL breaks the rules, the fetch
       * fails or the document does not describe a public client this server can serve.
       */
      resolve: (clientId: string): Effect.Effect<DocumentClient, ClientDocumentRefused> =>
        Effect.gen(function* () {
          const settings = yield* ClientMetadataSettings
          const problem = clientIdUrlProblem(clientId)
          if (problem !== null) return yield* new ClientDocumentRefused({ clientId, reason: problem })
          const entry = kept.get(clientId)
          if (entry !== undefined && entry.until > clock.now()) return entry.found
          const fetched = yield* fetchDocument(clientId, settings)
          const found = clientOfDocument(clientId, fetched)
          if (typeof found === "string") {
            kept.delete(clientId)
            return yield* new ClientDocumentRefused({ clientId, reason: found })
          }
          keep(clientId, found, clock.now() + cacheMsOf(fetched.cacheControl, settings), settings)
          return found
        })
    }
  })
}) {}
