/**
 * `GET|POST /oauth/authorize`: the authorization request's parameters checked (RFC 6749 4.1.1 with
 * PKCE S256 only and the RFC 8707 `resource` naming one of the MCP addresses), then the sign-in
 * steps: email, one-time code, workspace (chosen when the member has several at `/mcp`; fixed at a
 * slug address), and the redirect to the client with `code` and `state`. A request that cannot be
 * sent back (unknown client, unregistered redirect URI) gets an error page; other problems go back
 * to the client as `error`. Every POST carries the CSRF token (the Portal's double-submit check).
 * The client and its redirect URI are the request's admission (`admission.ts`): refused with the
 * error page and counted by no one, else counted once against the request's address (429 over it).
 * The client is a registered one or, for a URL `client_id`, the one its metadata document
 * describes (`client-documents.ts`; a document that cannot be used gets the error page). A loopback
 * redirect URI matches a registered one whatever its port (RFC 8252 7.3).
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { csrfCookie, csrfField, csrfMatches, isCsrfToken, newCsrfToken } from "../../identity/sign-in/csrf.js"
import { forbiddenPage } from "../../portal/pages/sign-in.js"
import { cameOverHttps, cookieOptions, csrfCookieSeconds, parseCookies } from "../../identity/sign-in/cookies.js"
import { requestOrigin } from "../../http/request-url.js"
import type { McpAddress } from "../auth.js"
import { mcpAddressOf } from "../http.js"
import type { RateLimited } from "../../platform/errors.js"
import type { OAuthAdmission } from "./admission.js"
import { McpApproval } from "./approval.js"
import {
  addressPath,
  type AuthorizationRequest,
  isCodeChallenge,
  type OAuthClient,
  isLoopbackRedirect,
  redirectTarget,
  redirectUriMatches
} from "../../identity/mcp-sign-in/domain.js"
import type { ClientDocumentRefused, DocumentClient } from "./client-documents.js"
import { type AuthorizePageContext, authorizeErrorPage, signInCodePage, signInEmailPage, signInWrongCodeText, workspacePage } from "./pages.js"

/** The path every sign-in cookie is scoped to. */
export const oauthPath = "/oauth/"

const securityHeaders = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin"
}

/** A checked authorization request. */
interface Checked {
  readonly client: OAuthClient
  /** The client's metadata document, when its id is a URL. */
  readonly document: DocumentClient | null
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

/** An error page that sends nothing back to the client. */
type PageOutcome = Extract<Outcome, { readonly kind: "page" }>

const unknownClient: PageOutcome = { kind: "page", status: 400, title: "Unknown client", message: "This connection request names no registered client. Start again from your MCP client." }

const wrongRedirect: PageOutcome = {
  kind: "page",
  status: 400,
  title: "Wrong redirect address",
  message: "The redirect_uri of this request is not one the client registered, so the request is refused."
}

/** The page of a URL client id whose metadata document cannot be used. */
const unusableDocument = (refused: ClientDocumentRefused): PageOutcome => ({
  kind: "page",
  status: 400,
  title: "Client metadata not usable",
  message: `This connection request names its client by the URL ${refused.clientId}, whose metadata document cannot be used: ${refused.reason}. Nothing was done.`
})

/**
 * The redirect URI of the request (the client's only one when none is given), when it matches one
 * the client registered (the same, or on a loopback host with another port); else null.
 */
const redirectUriOf = (client: OAuthClient, params: URLSearchParams): string | null => {
  const redirectUri = params.get("redirect_uri") ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : null)
  return redirectUri !== null && client.redirectUris.some((registered) => redirectUriMatches(registered, redirectUri)) ? redirectUri : null
}

/**
 * Admits the authorization request (RFC 6749 4.1.2.1's first checks): its client registered (else
 * the unknown-client page), its redirect URI one the client registered (else the wrong-redirect
 * page); then counted once against the address.
 */
const admit = (admission: OAuthAdmission, request: HttpServerRequest.HttpServerRequest, params: URLSearchParams) =>
  admission.authorizing<PageOutcome>(request, params.get("client_id") ?? "", {
    unknown: unknownClient,
    document: unusableDocument,
    authorize: (client) => (redirectUriOf(client, params) === null ? wrongRedirect : null)
  })

/** Checks the admitted authorization request's other parameters in the order RFC 6749 4.1.2.1 asks. */
const check = (client: OAuthClient, document: DocumentClient | null, params: URLSearchParams, origin: string): Exclude<Outcome, PageOutcome> => {
  const redirectUri = redirectUriOf(client, params)!
  const state = params.get("state")
  const refuse = (error: string, description: string): Exclude<Outcome, PageOutcome> => ({ kind: "back", location: backTo(redirectUri, state, { error, error_description: description }) })
  if (params.get("response_type") !== "code") return refuse("unsupported_response_type", "Only response_type=code is supported.")
  if (params.get("code_challenge_method") !== "S256") return refuse("invalid_request", "PKCE is required with code_challenge_method=S256.")
  const challenge = params.get("code_challenge") ?? ""
  if (!isCodeChallenge(challenge)) return refuse("invalid_request", "code_challenge must be 43 to 128 unreserved characters.")
  const resource = params.get("resource")
  const address = resource === null ? null : addressOfResource(resource, origin)
  if (address === null) return refuse("invalid_target", `resource must name an MCP address of this server: ${origin}/mcp or ${origin}/api/v1/orgs/<slug>/mcp.`)
  const request: AuthorizationRequest = { clientId: client.id, redirectUri, codeChallenge: challenge, resource: addressPath(address), scope: params.get("scope") }
  return { kind: "ok", checked: { client, document, address, request, state } }
}

const htmlAnswer = (body: string, status: number) => HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers: securityHeaders })

const see = (location: string) => HttpServerResponse.empty({ status: 303, headers: { ...securityHeaders, location } })

/** The page of a request over its address's rate: 429 with `Retry-After`, nothing done. */
const rateLimitedAnswer = (limited: RateLimited) =>
  HttpServerResponse.setHeader(
    htmlAnswer(authorizeErrorPage("Too many requests", `This address sent more sign-in requests than a minute takes. Nothing was done. Try again in ${limited.retryAfterSeconds} seconds.`), 429),
    "retry-after",
    String(limited.retryAfterSeconds)
  )

/** Answers a request to `/oauth/authorize`. */
export const authorize = (request: HttpServerRequest.HttpServerRequest, url: URL, admission: OAuthAdmission) =>
  Effect.gen(function* () {
    const approval = yield* McpApproval
    const origin = requestOrigin(request)
    const admitted = yield* Effect.either(admit(admission, request, url.searchParams))
    if (admitted._tag === "Left") {
      const refusal = admitted.left
      return "kind" in refusal ? htmlAnswer(authorizeErrorPage(refusal.title, refusal.message), refusal.status) : rateLimitedAnswer(refusal)
    }
    const outcome = check(admitted.right.found.client, admitted.right.found.document, url.searchParams, origin)
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
      sendsTo: redirectTarget(checked.request.redirectUri),
      publishedBy: checked.document === null ? null : new URL(checked.client.id).host,
      sendsToLoopback: isLoopbackRedirect(checked.request.redirectUri)
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
      const code = yield* approval.approve(verified.ticket, verified.workspaces[0]!.memberId, checked.address, checked.request, checked.document)
      return code === null ? refused("The sign-in could not be completed. Start again from your MCP client.") : approved(code)
    }
    if (step === "workspace") {
      const code = yield* approval.approve(form.get("ticket") ?? "", form.get("member") ?? "", checked.address, checked.request, checked.document)
      return code === null ? refused("That choice has expired or is not one of your workspaces. Start again from your MCP client.") : approved(code)
    }
    if (step === "deny") return see(backTo(checked.request.redirectUri, checked.state, { error: "access_denied", error_description: "The member cancelled the connection." }))
    return refused("This form step is unknown. Start again from your MCP client.")
  })
