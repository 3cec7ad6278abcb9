/**
 * The Portal's web pages at `/portals/<portal-id>/`, on the same Node server as the API: a branch
 * in front of the API's router (like the MCP server's). Pages are HTML rendered here; every POST
 * carries the CSRF token (`csrf.ts`) or is refused with 403 before anything else happens. A request
 * that needs a signed-in person goes through the one admission (`admission.ts`): without a live
 * session it gets the email form (counted by no one), over its end user's rate a 429 page.
 *
 * GET  /portals/<id>/                 the Apps when signed in, else the email form
 * POST /portals/<id>/sign-in          asks for a code (one neutral answer)
 * POST /portals/<id>/verify           checks the code; opens the session (303 to the Apps)
 * POST /portals/<id>/sign-out         ends the session
 * GET  /portals/<id>/apps/<app>       the chat (`?conversation=<id>` resumes one of yours)
 * POST /portals/<id>/apps/<app>       one turn: the page again, or SSE when asked for `text/event-stream`
 *                                     (the API's events; `done` adds `reply_html`, the reply drawn from its markdown)
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { maxMessageChars } from "../runtime/runs/domain.js"
import { RunSettings } from "../runtime/runs/settings.js"
import { streamRun } from "../runtime/runs/sse.js"
import { RunEventLog } from "../runtime/runs/event-log.js"
import { PortalChat } from "./chat.js"
import { csrfCookie, csrfField, csrfMatches, isCsrfToken, newCsrfToken } from "../identity/sign-in/csrf.js"
import { appsPage, chatPage } from "./pages/apps.js"
import { markdownHtml } from "./pages/markdown.js"
import { codePage, emailPage, forbiddenPage, notFoundPage, rateLimitedPage, tooLargePage, wrongCodeText } from "./pages/sign-in.js"
import { bodyWithinLimit } from "../http/body-limit.js"
import { maxRequestBodyBytes } from "../http/limits.js"
import { makePortalAdmission } from "./admission.js"
import type { RateLimited } from "../platform/errors.js"
import type { PortalRow } from "./repo.js"
import { PortalSignIn, type SignedIn } from "./service.js"
import { cameOverHttps, cookieOptions, type CookieToSet, csrfCookieSeconds, parseCookies, portalPath, sessionCookie, sessionTtlMs } from "../identity/sign-in/cookies.js"
import { decodedSegment, plainRequestPath, requestUrl } from "../http/request-url.js"

const portalPattern = /^\/portals\/([^/]+)(\/.*)?$/

/** What a Portal request knows about its caller. */
interface Visit {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly url: URL
  readonly portal: PortalRow
  readonly cookies: ReadonlyMap<string, string>
  readonly secure: boolean
  /** The CSRF token of the pages answered (the cookie's, or a new one set with the answer). */
  readonly csrf: string
  readonly setCookies: Array<CookieToSet>
}

const securityHeaders = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin"
}

const htmlResponse = (body: string, status: number) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers: securityHeaders })

/** The visit's cookies set on a response. */
const withCookies = (visit: Visit, response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.unsafeSetCookies(
    response,
    visit.setCookies.map((c) => [c.name, c.value, cookieOptions(portalPath(visit.portal.id), visit.secure, c.maxAgeSeconds)] as const)
  )

const answer = (visit: Visit, body: string, status = 200) => withCookies(visit, htmlResponse(body, status))

const redirect = (visit: Visit, location: string) => withCookies(visit, HttpServerResponse.empty({ status: 303, headers: { ...securityHeaders, location } }))

const cookie = (visit: Visit, name: string, value: string, maxAgeSeconds: number) => void visit.setCookies.push({ name, value, maxAgeSeconds })

/** The Portal branch: answers `/portals/…`, passes everything else to the API. */
export const PortalHttpLive = HttpApiBuilder.middleware(
  Effect.gen(function* () {
    const signIn = yield* PortalSignIn
    const admit = yield* makePortalAdmission
    const chat = yield* PortalChat
    const { keepAliveMs } = yield* RunSettings
    const eventLog = yield* RunEventLog

    const formOf = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => new URLSearchParams(text))

    /** The signed-in person, admitted and counted once; or null when refused (a dead session cookie is removed); `rate_limited` over the person's rate. */
    const signedInOf = (visit: Visit): Effect.Effect<{ readonly signedIn: SignedIn | null; readonly hadSession: boolean }, RateLimited> =>
      admit(visit.portal, visit.cookies.get(sessionCookie)).pipe(
        Effect.map((signedIn) => ({ signedIn, hadSession: true })),
        Effect.catchTag("PortalSignedOut", ({ hadSession }) =>
          Effect.sync(() => {
            if (hadSession) cookie(visit, sessionCookie, "", 0)
            return { signedIn: null, hadSession }
          })
        )
      )

    /** The answer over the person's rate: 429 with `Retry-After`, nothing done. */
    const rateLimited = (visit: Visit, limited: RateLimited) =>
      HttpServerResponse.setHeader(answer(visit, rateLimitedPage(limited.retryAfterSeconds), 429), "retry-after", String(limited.retryAfterSeconds))

    const signedOutPage = (visit: Visit, hadSession: boolean) =>
      answer(visit, emailPage(visit.portal, visit.csrf, hadSession ? "Your session has ended. Sign in again." : null))

    const chatTurn = (visit: Visit, signedIn: SignedIn, appId: string, form: URLSearchParams) =>
      Effect.gen(function* () {
        const app = yield* Effect.either(chat.app(signedIn, appId))
        if (app._tag === "Left") return answer(visit, notFoundPage(), 404)
        const message = (form.get("message") ?? "").trim()
        const conversationId = (form.get("conversation_id") ?? "").trim() || null
        const render = (error: string | null, status: number, conversation: string | null) =>
          Effect.map(conversation === null ? Effect.succeed([]) : Effect.orElseSucceed(chat.messages(signedIn, conversation), () => []), (messages) =>
            answer(visit, chatPage(signedIn, visit.csrf, app.right, { conversationId: conversation, messages, error }), status)
          )
        if (message.length === 0 || message.length > maxMessageChars) {
          return yield* render(`Write a message of 1 to ${maxMessageChars} characters.`, 400, conversationId)
        }
        const prepared = yield* Effect.either(chat.prepare(signedIn, appId, message, conversationId))
        if (prepared._tag === "Left") {
          const failure = prepared.left
          if (failure._tag === "InsufficientCredits") {
            return yield* render("No credits are left on your plans (insufficient_credits). Nothing ran and nothing was charged.", 402, conversationId)
          }
          if (failure._tag === "NotFound") return yield* render("That conversation is not yours or no longer exists.", 404, null)
          return yield* render(`The App cannot answer right now: ${failure.message}`, 502, conversationId)
        }
        if ((visit.request.headers["accept"] ?? "").includes("text/event-stream")) {
          // The `done` event also carries the reply drawn as sanitized HTML, which the page shows in place of the streamed text.
          const response = yield* streamRun(
            (onEvent) => Effect.map(chat.run(signedIn, prepared.right, onEvent), (answer) => ({ ...answer, reply_html: markdownHtml(answer.reply).html })),
            keepAliveMs
          ).pipe(Effect.provideService(RunEventLog, eventLog))
          return withCookies(visit, response)
        }
        const ran = yield* Effect.either(chat.run(signedIn, prepared.right))
        if (ran._tag === "Right") return yield* render(null, 200, ran.right.conversation_id)
        const failure = ran.left
        const status = failure._tag === "InsufficientCredits" ? 402 : 502
        const text =
          failure._tag === "InsufficientCredits"
            ? "No credits are left on your plans (insufficient_credits). Nothing ran and nothing was charged."
            : `The App could not answer: ${failure.message} Nothing was charged.`
        return yield* render(text, status, conversationId)
      })

    const serve = (visit: Visit, rest: string) =>
      Effect.gen(function* () {
        const { request } = visit
        const method = request.method
        const appMatch = /^\/apps\/([^/]+)$/.exec(rest)
        if (method === "POST") {
          const form = yield* formOf(request)
          if (!csrfMatches(visit.cookies.get(csrfCookie), form.get(csrfField))) return answer(visit, forbiddenPage(), 403)
          if (rest === "/sign-in") {
            const email = (form.get("email") ?? "").trim()
            yield* signIn.requestCode(visit.portal, email)
            return answer(visit, codePage(visit.portal, visit.csrf, email, null))
          }
          if (rest === "/verify") {
            const email = (form.get("email") ?? "").trim()
            const opened = yield* signIn.verifyCode(visit.portal, email, form.get("code") ?? "")
            if (opened === null) return answer(visit, codePage(visit.portal, visit.csrf, email, wrongCodeText), 400)
            cookie(visit, sessionCookie, opened.token, sessionTtlMs / 1000)
            cookie(visit, csrfCookie, newCsrfToken(), csrfCookieSeconds)
            return redirect(visit, portalPath(visit.portal.id))
          }
          const { signedIn, hadSession } = yield* signedInOf(visit)
          if (rest === "/sign-out") {
            if (signedIn !== null) yield* signIn.signOut(signedIn)
            if (visit.cookies.has(sessionCookie)) cookie(visit, sessionCookie, "", 0)
            return answer(visit, emailPage(visit.portal, visit.csrf, "You are signed out."))
          }
          if (appMatch !== null) {
            if (signedIn === null) return signedOutPage(visit, hadSession)
            const appId = decodedSegment(appMatch[1]!)
            if (appId === null) return answer(visit, notFoundPage(), 404)
            return yield* chatTurn(visit, signedIn, appId, form)
          }
          return answer(visit, notFoundPage(), 404)
        }
        if (method !== "GET" && method !== "HEAD") return answer(visit, notFoundPage(), 404)
        if (rest === "/") {
          const { signedIn, hadSession } = yield* signedInOf(visit)
          if (signedIn === null) return signedOutPage(visit, hadSession)
          return answer(visit, appsPage(signedIn, visit.csrf, yield* chat.apps(signedIn)))
        }
        if (appMatch !== null) {
          const { signedIn, hadSession } = yield* signedInOf(visit)
          if (signedIn === null) return signedOutPage(visit, hadSession)
          const appId = decodedSegment(appMatch[1]!)
          if (appId === null) return answer(visit, notFoundPage(), 404)
          const app = yield* Effect.either(chat.app(signedIn, appId))
          if (app._tag === "Left") return answer(visit, notFoundPage(), 404)
          const conversationId = visit.url.searchParams.get("conversation")
          if (conversationId === null) return answer(visit, chatPage(signedIn, visit.csrf, app.right, { conversationId: null, messages: [], error: null }))
          const messages = yield* Effect.either(chat.messages(signedIn, conversationId))
          if (messages._tag === "Left") return answer(visit, notFoundPage(), 404)
          return answer(visit, chatPage(signedIn, visit.csrf, app.right, { conversationId, messages: messages.right, error: null }))
        }
        return answer(visit, notFoundPage(), 404)
      })

    return (app) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = plainRequestPath(request.url)
        if (path !== null && !portalPattern.test(path)) return yield* app
        const url = requestUrl(request)
        const match = portalPattern.exec(url.pathname)
        if (match === null) return yield* app
        const portalId = decodedSegment(match[1]!)
        if (portalId === null) return htmlResponse(notFoundPage(), 404)
        // A body over the limit is answered with a page the browser sees, as the API answers 413.
        if (!(yield* bodyWithinLimit(request))) {
          return HttpServerResponse.setHeader(htmlResponse(tooLargePage(maxRequestBodyBytes), 413), "connection", "close")
        }
        const portal = yield* signIn.portal(portalId)
        if (portal === null) return htmlResponse(notFoundPage(), 404)
        if (match[2] === undefined) return HttpServerResponse.empty({ status: 308, headers: { location: portalPath(portal.id) } })
        const cookies = parseCookies(request.headers["cookie"])
        const existing = cookies.get(csrfCookie)
        const visit: Visit = {
          request,
          url,
          portal,
          cookies,
          secure: cameOverHttps(request.headers, url),
          csrf: isCsrfToken(existing) ? existing : newCsrfToken(),
          setCookies: []
        }
        if (visit.csrf !== existing) cookie(visit, csrfCookie, visit.csrf, csrfCookieSeconds)
        // Middleware runs uninterruptibly; a run must be interruptible to race its cancel signal and stop when the client goes away.
        return yield* Effect.interruptible(serve(visit, match[2]).pipe(Effect.catchTag("RateLimited", (limited) => Effect.succeed(rateLimited(visit, limited)))))
      })
  })
)
