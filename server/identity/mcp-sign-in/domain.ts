/**
 * MCP sign-in connections (OAuth 2.1 authorization code with PKCE, dynamic client registration):
 * lifetimes, token formats, the PKCE check, which redirect URIs a client may register, and the
 * OAuth error a token or registration request answers. Pure; knows nothing of SQL or HTTP.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { Data } from "effect"
import { apiPrefix } from "../../platform/api-root.js"
import { randomToken } from "../../platform/ids.js"
import type { McpAddress } from "./address.js"

/** How long an access token works; the client refreshes it then. */
export const accessTokenTtlMs = 60 * 60_000

/** How long a refresh token works (each refresh rotates it and starts this again). */
export const refreshTokenTtlMs = 30 * 24 * 60 * 60_000

/** How long an authorization code may be exchanged. */
export const authorizationCodeTtlMs = 5 * 60_000

/** The prefix of access tokens (a sign-in token is told apart from a key by it). */
export const accessTokenPrefix = "svcma_"

/** The prefix of refresh tokens. */
export const refreshTokenPrefix = "svcmr_"

/** A new opaque access token. */
export const newAccessToken = (): string => `${accessTokenPrefix}${randomToken(40)}`

/** A new opaque refresh token. */
export const newRefreshToken = (): string => `${refreshTokenPrefix}${randomToken(40)}`

/** A new opaque authorization code, or workspace-choice ticket. */
export const newOpaqueCode = (): string => randomToken(40)

/** The hash an opaque token is stored as (each carries 238 random bits, so no key is needed). */
export const tokenHash = (token: string): string => createHash("sha256").update(token).digest("hex")

/** Whether a bearer token is a sign-in access token by its form. */
export const isAccessToken = (token: string): boolean => /^svcma_[0-9A-Za-z]{40}$/.test(token)

const pkcePattern = /^[A-Za-z0-9._~-]{43,128}$/

/** Whether a `code_challenge` has the form of an S256 challenge (43 to 128 unreserved characters). */
export const isCodeChallenge = (challenge: string): boolean => pkcePattern.test(challenge)

/** Whether `verifier` is the PKCE verifier of the S256 `challenge`, compared in constant time. */
export const pkceMatches = (verifier: string, challenge: string): boolean => {
  if (!pkcePattern.test(verifier)) return false
  const expected = Buffer.from(createHash("sha256").update(verifier).digest("base64url"))
  const given = Buffer.from(challenge)
  return expected.length === given.length && timingSafeEqual(expected, given)
}

const loopbackHosts = new Set(["127.0.0.1", "localhost", "[::1]"])

/**
 * Schemes that already mean something to a browser or the web, so never a native app's private-use
 * scheme (RFC 8252 7.1): a code sent there would run as script, open a file or go to a server.
 */
const refusedSchemes = new Set(["javascript:", "data:", "vbscript:", "file:", "blob:", "about:", "filesystem:", "ftp:", "ws:", "wss:", "mailto:", "tel:", "sms:"])

/** Whether a parsed redirect URI is http on a loopback host (RFC 8252 7.3: its port may vary per request). */
const isLoopbackHttp = (url: URL): boolean => url.protocol === "http:" && loopbackHosts.has(url.hostname)

/**
 * Why a redirect URI may not be registered, or null. It must be https, http on a loopback host
 * (RFC 8252 7.3), or a native app's private-use scheme (RFC 8252 7.1, `cursor://…`,
 * `com.example.app:/cb`); never with a user name or password, never with a fragment.
 */
export const redirectUriProblem = (uri: string): string | null => {
  if (!URL.canParse(uri)) return `'${uri}' is not an absolute URL`
  const url = new URL(uri)
  if (url.hash !== "" || uri.includes("#")) return `'${uri}' has a fragment`
  if (url.username !== "" || url.password !== "") return `'${uri}' carries a user name or password`
  if (url.protocol === "https:" || isLoopbackHttp(url)) return null
  if (url.protocol === "http:") return `'${uri}' is http on a host that is not a loopback address (127.0.0.1, [::1], localhost); use https`
  if (refusedSchemes.has(url.protocol)) return `'${uri}' uses the scheme ${url.protocol.slice(0, -1)}, which is not a native app's private-use scheme`
  return null
}

/**
 * Whether the redirect URI of an authorization request matches one the client registered: the
 * same string, or (RFC 8252 7.3, OAuth 2.1 8.4.2) both http on the same loopback host with the same
 * path and query, whatever the ports.
 */
export const redirectUriMatches = (registered: string, requested: string): boolean => {
  if (registered === requested) return true
  if (!URL.canParse(registered) || !URL.canParse(requested)) return false
  const a = new URL(registered)
  const b = new URL(requested)
  if (!isLoopbackHttp(a) || !isLoopbackHttp(b) || requested.includes("#") || b.username !== "" || b.password !== "") return false
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search
}

/** Whether a redirect URI is http on a loopback host: the approval goes to a program on the member's own computer. */
export const isLoopbackRedirect = (uri: string): boolean => URL.canParse(uri) && isLoopbackHttp(new URL(uri))

/** Where a redirect URI sends the approval, as the authorization page names it: its origin, or its scheme and host for a private-use scheme. */
export const redirectTarget = (uri: string): string => {
  const url = new URL(uri)
  if (url.origin !== "null") return url.origin
  return url.host === "" ? url.protocol : `${url.protocol}//${url.host}`
}

/** The one scope of MCP sign-in: connecting to the MCP server as oneself, with one's role's permissions. */
export const mcpScope = "mcp"

/** The scopes the protected-resource and authorization server metadata advertise. */
export const scopesSupported: ReadonlyArray<string> = [mcpScope]

/** OAuth error codes the token, revocation and registration endpoints answer (RFC 6749 5.2, RFC 7591 3.2.2). */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unsupported_grant_type"
  | "invalid_client_metadata"
  | "invalid_redirect_uri"

/** An OAuth error answer: `{error, error_description}`. */
export class OAuthFailure extends Data.TaggedError("OAuthFailure")<{ readonly error: OAuthErrorCode; readonly description: string }> {}

/** What a token request answers (RFC 6749 5.1). */
export interface TokenSet {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope?: string
}

/** A registered client as the endpoints see it. */
export interface OAuthClient {
  readonly id: string
  readonly name: string
  readonly redirectUris: ReadonlyArray<string>
}

/** An approved authorization request: who asked, where to send the code, the PKCE challenge, the address. */
export interface AuthorizationRequest {
  readonly clientId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  /** The MCP address approved: `/mcp` or `/api/v1/orgs/<slug>/mcp`. */
  readonly resource: string
  readonly scope: string | null
}

/** A workspace the member may connect: their membership in one organization. */
export interface Workspace {
  readonly memberId: string
  readonly organizationId: string
  readonly slug: string
  readonly name: string
}

/** A sign-in session as `svc members sessions` shows it. */
export interface SignInSession {
  readonly id: string
  readonly clientName: string
  readonly address: string
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly expiresAt: string
  readonly revokedAt: string | null
}

/** The path of an MCP address: `/mcp`, or `/api/v1/orgs/<slug>/mcp` for a workspace's. Tokens are bound to it. */
export const addressPath = (address: McpAddress): string =>
  address.kind === "any" ? "/mcp" : `${apiPrefix}/orgs/${encodeURIComponent(address.slug)}/mcp`
