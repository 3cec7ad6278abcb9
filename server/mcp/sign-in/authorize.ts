/**
 * `GET|POST /oauth/authorize`: the authorization request's parameters checked (RFC 6749 4.1.1 with
 * PKCE S256 only and the RFC 8707 `resource` naming one of the MCP addresses), then the sign-in
 * steps: email, one-time code, workspace (chosen when the member has several at `/mcp`; fixed at a
 * slug address), and the redirect to the client with `code` and `state`. A request that cannot be
 * sent back (unknown client, unregistered redirect URI) gets an error page; other problems go back
 * to the client as `error`. Every POST carries the CSRF token (the Portal's double-submit check).
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { csrfCookie, csrfField, csrfMatches, isCsrfToken, newCsrfToken } from "../../identity/sign-in/csrf.js"
import { forbiddenPage } from "../../portal/pages/sign-in.js"
import { cameOverHttps, cookieOptions, csrfCookieSeconds, parseCookies } from "../../identity/sign-in/cookies.js"
import { requestOrigin } from "../../http/request-url.js"
import type { McpAddress } from "../auth.js"
import { mcpAddressOf } from "../http.js"
import { McpApproval } from "./approval.js"
import { addressPath, type AuthorizationRequest, isCodeChallenge, type OAuthClient } from "../../identity/mcp-sign-in/domain.js"
import { type AuthorizePageContext, authorizeErrorPage, signInCodePage, signInEmailPage, signInWrongCodeText, workspacePage } from "./pages.js"

/** The path every sign-in cookie is scoped to. */
export const oauthPath = "/oauth/"

const securityHeaders = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer"
}

/** A checked authorization request. */
interface Checked {
  readonly client: OAuthClient
  readonly address: McpAddress
  readonly request: AuthorizationRequest
  readonly state: string | null
}

type Outcome =
  | { readonly kind: "page"; readonly status: number; readonly title: string; readonly message: string }
  | { readonly kind: "back"; readonly location: string }
  | { readonly kind: "ok"; readonly checked: Checked }

/** The client's redirect URI with the answer's parameters (and `state` when the request had one). */
const backTo = (redirectUri: string, state: string | null, params: Record<string, string>): string => {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  if (state !== null) url.searchParams.set("state", state)
  return url.href
}

/** The MCP address a `resource` parameter names on this server, or null. */
const addressOfResource = (resource: string, origin: string): McpAddress | null => {
  if (!URL.canParse(resource)) return null
  const url = new URL(resource)
  if (url.origin !== origin || url.search !== "" || url.hash !== "") return null
  return mcpAddressOf(url.pathname)
}

/** Checks the authorization request's parameters in the order RFC 6749 4.1.2.1 asks. */
const check = (params: URLSearchParams, origin: string) =>
  Effect.gen(function* () {
    const approval = yield* McpApproval
    const clientId = params.get("client_id") ?? ""
    const client = clientId === "" ? null : yield* approval.client(clientId)
    if (client === null) return { kind: "page", status: 400, title: "Unknown client", message: "This connection request names no registered client. Start again from your MCP client." } satisfies Outcome
    const given = params.get("redirect_uri")
    const redirectUri = given ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : null)
    if (redirectUri === null || !client.redirectUris.includes(redirectUri)) {
      return { kind: "page", status: 400, title: "Wrong redirect address", message: "The redirect_uri of this request is not one the client registered, so the request is refused." } satisfies Outcome
    }
    const state = params.get("state")
    const refuse = (error: string, description: string): Outcome => ({ kind: "back", location: backTo(redirectUri, state, { error, error_description: description }) })
    if (params.get("response_type") !== "code") return refuse("unsupported_response_type", "Only response_type=code is supported.")
    if (params.get("code_challenge_method") !== "S256") return refuse("invalid_request", "PKCE is required with code_challenge_method=S256.")
    const challenge = params.get("code_challenge") ?? ""
    if (!isCodeChallenge(challenge)) return refuse("invalid_request", "code_challenge must be 43 to 128 unreserved characters.")
    const resource = params.get("resource")
    const address = resource === null ? null : addressOfResource(resource, origin)
    if (address === null) return refuse("invalid_target", `resource must name an MCP address of this server: ${origin}/mcp or ${origin}/api/v1/orgs/<slug>/mcp.`)
    const request: AuthorizationRequest = { clientId: client.id, redirectUri, codeChallenge: challenge, resource: addressPath(address), scope: params.get("scope") }
    return { kind: "ok", checked: { client, address, request, state } } satisfies Outcome
  })

const htmlAnswer = (body: string, status: number) => HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers: securityHeaders })

const see = (location: string) => HttpServerResponse.empty({ status: 303, headers: { ...securityHeaders, location } })

/** Answers a request to `/oauth/authorize`. */
export const authorize = (request: HttpServerRequest.HttpServerRequest, url: URL) =>
  Effect.gen(function* () {
    const approval = yield* McpApproval
    const origin = requestOrigin(request)
    const outcome = yield* check(url.searchParams, origin)
    if (outcome.kind === "page") return htmlAnswer(authorizeErrorPage(outcome.title, outcome.message), outcome.status)
    if (outcome.kind === "back") return see(outcome.location)
    const { checked } = outcome
    const cookies = parseCookies(request.headers["cookie"])
    const existing = cookies.get(csrfCookie)
    const csrf = isCsrfToken(existing) ? existing : newCsrfToken()
    const secure = cameOverHttps(request.headers, url)
    const withCsrf = (response: HttpServerResponse.HttpServerResponse) =>
      csrf === existing ? response : HttpServerResponse.unsafeSetCookies(response, [[csrfCookie, csrf, cookieOptions(oauthPath, secure, csrfCookieSeconds)]])
    const context: AuthorizePageContext = { action: `${url.pathname}${url.search}`, csrf, clientName: checked.client.name,
      address: `${origin}${checked.request.resource}`,
      sendsTo: new URL(checked.request.redirectUri).origin
    }
    const answer = (body: string, status = 200) => withCsrf(htmlAnswer(body, status))
    const approved = (code: string) => see(backTo(checked.request.redirectUri, checked.state, { code }))
    const refused = (message: string) => answer(authorizeErrorPage("Cannot connect", message), 400)

    if (request.method === "GET" || request.method === "HEAD") return answer(signInEmailPage(context))
    if (request.method !== "POST") return answer(authorizeErrorPage("Not found", "There is no such page here."), 404)
    const form = new URLSearchParams(yield* Effect.orElseSucceed(request.text, () => ""))
    if (!csrfMatches(existing, form.get(csrfField))) return answer(forbiddenPage(), 403)
    const step = form.get("step")
    const email = (form.get("email") ?? "").trim()
    if (step === "email") {
      yield* approval.requestCode(email, checked.address, checked.client.name)
      return answer(signInCodePage(context, email, null))
    }
    if (step === "code") {
      const verified = yield* approval.verifyCode(email, form.get("code") ?? "", checked.address)
      if (verified === null) return answer(signInCodePage(context, email, signInWrongCodeText), 400)
      if (verified.workspaces.length > 1) return answer(workspacePage(context, verified.ticket, verified.workspaces))
      const code = yield* approval.approve(verified.ticket, verified.workspaces[0]!.memberId, checked.address, checked.request)
      return code === null ? refused("The sign-in could not be completed. Start again from your MCP client.") : approved(code)
    }
    if (step === "workspace") {
      const code = yield* approval.approve(form.get("ticket") ?? "", form.get("member") ?? "", checked.address, checked.request)
      return code === null ? refused("That choice has expired or is not one of your workspaces. Start again from your MCP client.") : approved(code)
    }
    if (step === "deny") return see(backTo(checked.request.redirectUri, checked.state, { error: "access_denied", error_description: "The member cancelled the connection." }))
    return refused("This form step is unknown. Start again from your MCP client.")
  })
