/**
 * The pages of MCP sign-in at `/oauth/authorize`: the email form, the code form, the workspace
 * choice and the plain error page. Built with the Portal's HTML helpers (escaping, layout, CSRF
 * field) and its neutral sign-in wording; every form posts back to the same authorization URL, so
 * the request's parameters are read (and checked) again on each step.
 */
import { csrfInput, html, page } from "../../portal/pages/html.js"
import { neutralSentText, wrongCodeText } from "../../portal/pages/sign-in.js"
import type { Workspace } from "../../identity/mcp-sign-in/domain.js"

/** What every page of one authorization request shows and posts to. */
export interface AuthorizePageContext {
  /** The authorization URL (path and query) the forms post to. */
  readonly action: string
  readonly csrf: string
  readonly clientName: string
  /** The MCP address being approved. */
  readonly address: string
  /** Where the approval is sent (the redirect URI's origin), so a member can tell a client that is not theirs. */
  readonly sendsTo: string
  /** The host that publishes the client's metadata document, for a client named by one; else null. */
  readonly publishedBy: string | null
  /** Whether the approval goes to a loopback address (a program on the member's computer). */
  readonly sendsToLoopback: boolean
}

/**
 * The warning for a client named by a metadata document whose approval goes to this computer: any
 * program can publish, or point at, a well-known client's document and listen on a loopback port
 * (the MCP spec's "Localhost Redirect URI Risks").
 */
const loopbackWarning = (context: AuthorizePageContext) =>
  context.publishedBy === null || !context.sendsToLoopback
    ? ""
    : html`
<p class="notice">Any program on your computer can say it is ${context.clientName}: continue only if you started this connection yourself, just now.</p>`

const intro = (context: AuthorizePageContext) =>
  html`<p><strong>${context.clientName}</strong>${context.publishedBy === null ? "" : html` (described by <code>${context.publishedBy}</code>)`} asks to connect to svc as you, at the MCP address <code>${context.address}</code>.
The approval is sent to <code>${context.sendsTo}</code>; continue only if you started this from your own MCP client.</p>${loopbackWarning(context)}`

/** The email form. */
export const signInEmailPage = (context: AuthorizePageContext): string =>
  page(
    "Sign in to connect – svc",
    html`<main><h1>Sign in to connect ${context.clientName}</h1>
${intro(context)}
<p>Enter the email address of your membership and we will send you a one-time code. There is no password.</p>
<form method="post" action="${context.action}">${csrfInput(context.csrf)}<input type="hidden" name="step" value="email">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">Send me a code</button>
</form></main>`
  )

/** The code form for `email`; `error` is linked to the field. */
export const signInCodePage = (context: AuthorizePageContext, email: string, error: string | null): string =>
  page(
    "Enter your code – svc",
    html`<main><h1>Enter your code</h1>
${error === null ? html`<p role="status">${neutralSentText}</p>` : ""}
<form method="post" action="${context.action}">${csrfInput(context.csrf)}<input type="hidden" name="step" value="code">
<input type="hidden" name="email" value="${email}">
<label for="code">6-digit code sent to ${email}</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9 -]*" maxlength="9" autocomplete="one-time-code" required
${error === null ? "" : html` aria-invalid="true" aria-describedby="code-error"`}>
${error === null ? "" : html`<p id="code-error" class="error">${error}</p>`}
<button type="submit">Continue</button>
</form>
<form method="post" action="${context.action}">${csrfInput(context.csrf)}<input type="hidden" name="step" value="email">
<input type="hidden" name="email" value="${email}"><button type="submit">Send a new code</button></form></main>`
  )

/** The answer to a code that did not sign in, whatever the reason. */
export const signInWrongCodeText = wrongCodeText

/** The workspace choice of a member of several organizations. */
export const workspacePage = (context: AuthorizePageContext, ticket: string, workspaces: ReadonlyArray<Workspace>): string =>
  page(
    "Choose a workspace – svc",
    html`<main><h1>Choose the workspace to connect</h1>
${intro(context)}
<form method="post" action="${context.action}">${csrfInput(context.csrf)}<input type="hidden" name="step" value="workspace">
<input type="hidden" name="ticket" value="${ticket}">
<fieldset><legend>Your workspaces</legend>
${workspaces.map(
  (workspace, i) =>
    html`<label><input type="radio" name="member" value="${workspace.memberId}"${i === 0 ? html` checked` : ""}> ${workspace.name} (${workspace.slug})</label>`
)}
</fieldset>
<button type="submit">Connect</button>
</form>
<form method="post" action="${context.action}">${csrfInput(context.csrf)}<input type="hidden" name="step" value="deny">
<button type="submit">Cancel</button></form></main>`
  )

/** A request that cannot go back to its client (unknown client, unregistered redirect URI) or a step that failed. */
export const authorizeErrorPage = (title: string, message: string): string =>
  page(`${title} – svc`, html`<main><h1>${title}</h1><p>${message}</p></main>`)
