/**
 * The authorization server of MCP sign-in, on the same Node server as the API: a branch in front of
 * the API's router (like the MCP and Portal branches).
 *
 * GET  /.well-known/oauth-authorization-server   metadata (RFC 8414)
 * POST /oauth/register                           dynamic client registration (RFC 7591); public clients only
 *                                                (a client may also name itself by a metadata document URL: `client-documents.ts`)
 * GET|POST /oauth/authorize                      the sign-in pages (`authorize.ts`)
 * POST /oauth/token                              authorization_code (PKCE S256) and refresh_token (rotating)
 * POST /oauth/revoke                             token revocation (RFC 7009)
 *
 * Every `/oauth/*` request goes through the one admission (`admission.ts`): counted once against
 * its address (429 `rate_limited` over it); a request naming a client that is not registered is
 * refused as before and counted by no one. The metadata document is not counted.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { OAuthClientMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js"
import { Effect } from "effect"
import { plainRequestPath, requestOrigin, requestUrl } from "../../http/request-url.js"
import type { RateLimited } from "../../platform/errors.js"
import { makeOAuthAdmission, type OAuthAdmission } from "./admission.js"
import { McpApproval } from "./approval.js"
import { authorize } from "./authorize.js"
import { addressPath, OAuthFailure, redirectUriProblem, scopesSupported } from "../../identity/mcp-sign-in/domain.js"
import { McpSessions, notThisClients } from "../../identity/mcp-sign-in/sessions.js"
import { mcpAddressOf } from "../http.js"

/** The path of the authorization server metadata (RFC 8414). */
export const authorizationServerMetadataPath = "/.well-known/oauth-authorization-server"

/** The largest body the registration, token and revocation endpoints read. */
const maxBodyBytes = 64 * 1024

/** The authorization server metadata of this server, reached at `origin`. */
export const authorizationServerMetadata = (origin: string) => ({
  issuer: origin,
  authorization_endpoint: `${origin}/oauth/authorize`,
  token_endpoint: `${origin}/oauth/token`,
  registration_endpoint: `${origin}/oauth/register`,
  revocation_endpoint: `${origin}/oauth/revoke`,
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  code_challenge_methods_supported: ["S256"],
  token_endpoint_auth_methods_supported: ["none"],
  revocation_endpoint_auth_methods_supported: ["none"],
  scopes_supported: scopesSupported,
  client_id_metadata_document_supported: true,
  service_documentation: `${origin}/api/v1/openapi.json`
})

const json = (body: unknown, status = 200) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { "cache-control": "no-store", pragma: "no-cache" } })

const oauthError = (failure: OAuthFailure) =>
  json({ error: failure.error, error_description: failure.description }, failure.error === "invalid_client" ? 401 : 400)

/** The answer over the address's rate: 429 with `Retry-After`, in the endpoints' error shape, nothing done. */
const rateLimitedError = (limited: RateLimited) =>
  HttpServerResponse.setHeader(
    json({ error: "rate_limited", error_description: `Too many requests from this address; retry in ${limited.retryAfterSeconds} s.` }, 429),
    "retry-after",
    String(limited.retryAfterSeconds)
  )

/** The request body as text within the limit, or an OAuth failure. */
const bodyText = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) {
      return yield* new OAuthFailure({ error: "invalid_request", description: `The body is over ${maxBodyBytes} bytes.` })
    }
    const text = yield* Effect.orElseSucceed(request.text, () => "")
    if (text.length > maxBodyBytes) return yield* new OAuthFailure({ error: "invalid_request", description: `The body is over ${maxBodyBytes} bytes.` })
    return text
  })

/** A form body (`application/x-www-form-urlencoded`), as the token and revocation endpoints take. */
const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    if (type !== "application/x-www-form-urlencoded") {
      return yield* new OAuthFailure({ error: "invalid_request", description: "Send the parameters as application/x-www-form-urlencoded." })
    }
    return new URLSearchParams(yield* bodyText(request))
  })

const required = (form: URLSearchParams, name: string) =>
  Effect.suspend(() => {
    const value = form.get(name)
    return value === null || value === "" ? Effect.fail(new OAuthFailure({ error: "invalid_request", description: `${name} is required.` })) : Effect.succeed(value)
  })

/** The `resource` parameter as the address path it names on this server (null when absent). */
const resourcePathOf = (form: URLSearchParams, origin: string) =>
  Effect.suspend(() => {
    const resource = form.get("resource")
    if (resource === null) return Effect.succeed(null)
    const url = URL.canParse(resource) ? new URL(resource) : null
    const address = url !== null && url.origin === origin ? mcpAddressOf(url.pathname) : null
    return address === null
      ? Effect.fail(new OAuthFailure({ error: "invalid_grant", description: "resource names no MCP address of this server." }))
      : Effect.succeed(addressPath(address))
  })

const register = (request: HttpServerRequest.HttpServerRequest, admission: OAuthAdmission) =>
  Effect.gen(function* () {
    yield* admission.anonymous(request)
    const text = yield* bodyText(request)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return yield* new OAuthFailure({ error: "invalid_client_metadata", description: "The body is not JSON." })
    }
    const parsed = OAuthClientMetadataSchema.safeParse(body)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      return yield* new OAuthFailure({ error: "invalid_client_metadata", description: `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}` })
    }
    const metadata = parsed.data
    if (metadata.redirect_uris.length === 0) return yield* new OAuthFailure({ error: "invalid_redirect_uri", description: "redirect_uris: give at least one." })
    const problem = metadata.redirect_uris.map(redirectUriProblem).find((p) => p !== null)
    if (problem !== undefined && problem !== null) return yield* new OAuthFailure({ error: "invalid_redirect_uri", description: `redirect_uris: ${problem}.` })
    const unsupportedGrant = (metadata.grant_types ?? []).find((grant) => grant !== "authorization_code" && grant !== "refresh_token")
    if (unsupportedGrant !== undefined) return yield* new OAuthFailure({ error: "invalid_client_metadata", description: `grant_types: '${unsupportedGrant}' is not supported.` })
    if ((metadata.response_types ?? []).some((type) => type !== "code")) return yield* new OAuthFailure({ error: "invalid_client_metadata", description: "response_types: only 'code' is supported." })
    const name = (metadata.client_name ?? "").trim().slice(0, 100) || "MCP client"
    const registered = {
      ...metadata,
      client_name: name,
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"]
    }
    const { client, issuedAt } = yield* (yield* McpApproval).registerClient(name, metadata.redirect_uris, registered)
    return json({ client_id: client.id, client_id_issued_at: issuedAt, ...registered }, 201)
  })

const token = (request: HttpServerRequest.HttpServerRequest, admission: OAuthAdmission) =>
  Effect.gen(function* () {
    const form = yield* formOf(request)
    const sessions = yield* McpSessions
    const origin = requestOrigin(request)
    const grant = yield* required(form, "grant_type")
    const clientId = yield* required(form, "client_id")
    const resource = yield* resourcePathOf(form, origin)
    if (grant === "authorization_code") {
      const code = yield* required(form, "code")
      const redirectUri = yield* required(form, "redirect_uri")
      const codeVerifier = yield* required(form, "code_verifier")
      yield* admission.client(request, clientId, notThisClients.code)
      return json(yield* sessions.exchangeCode({ clientId, code, redirectUri, codeVerifier, resource }))
    }
    if (grant === "refresh_token") {
      const refreshToken = yield* required(form, "refresh_token")
      yield* admission.client(request, clientId, notThisClients.refresh)
      return json(yield* sessions.refresh({ clientId, refreshToken, resource }))
    }
    return yield* new OAuthFailure({ error: "unsupported_grant_type", description: "grant_type must be authorization_code or refresh_token." })
  })

const revoke = (request: HttpServerRequest.HttpServerRequest, admission: OAuthAdmission) =>
  Effect.gen(function* () {
    yield* admission.anonymous(request)
    const form = yield* formOf(request)
    yield* (yield* McpSessions).revoke(form.get("client_id"), yield* required(form, "token"))
    return json({})
  })

/** The sign-in branch: answers the metadata and `/oauth/*`, passes everything else to the API. */
export const OAuthHttpLive = HttpApiBuilder.middleware(
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<McpApproval | McpSessions>()
    const admission = yield* makeOAuthAdmission
    const endpoints: Record<
      string,
      (request: HttpServerRequest.HttpServerRequest, admission: OAuthAdmission) => Effect.Effect<HttpServerResponse.HttpServerResponse, OAuthFailure | RateLimited, McpApproval | McpSessions>
    > = {
      "/oauth/register": register,
      "/oauth/token": token,
      "/oauth/revoke": revoke
    }
    return (app) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = plainRequestPath(request.url)
        if (path !== null && path !== authorizationServerMetadataPath && path !== "/oauth/authorize" && endpoints[path] === undefined) return yield* app
        const url = requestUrl(request)
        if (url.pathname === authorizationServerMetadataPath && request.method === "GET") {
          return json(authorizationServerMetadata(requestOrigin(request)))
        }
        if (url.pathname === "/oauth/authorize") return yield* Effect.provide(authorize(request, url, admission), runtime)
        const endpoint = endpoints[url.pathname]
        if (endpoint === undefined || request.method !== "POST") return yield* app
        return yield* endpoint(request, admission).pipe(
          Effect.catchTags({ OAuthFailure: (failure) => Effect.succeed(oauthError(failure)), RateLimited: (limited) => Effect.succeed(rateLimitedError(limited)) }),
          Effect.provide(runtime)
        )
      })
  })
)
