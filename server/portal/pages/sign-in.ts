/** The sign-in pages: the email form, the code form, and the plain 404 of an unknown Portal. */
import type { PortalRow } from "../repo.js"
import { portalPath } from "../../identity/sign-in/cookies.js"
import { csrfInput, html, page } from "./html.js"

/** What every request for a code answers, whoever asked. */
export const neutralSentText = "If this address may sign in here, we sent it a code. It works for 10 minutes."

/** The one answer to a code that did not sign in, whatever the reason. */
export const wrongCodeText = "That code did not work. It may be mistyped, expired, used, or tried too often: check it, or ask for a new code."

/** The email form; `notice` is shown above it (a sign-out, an ended session). */
export const emailPage = (portal: PortalRow, csrf: string, notice: string | null = null): string =>
  page(
    `Sign in to ${portal.name}`,
    html`<main><h1>Sign in to ${portal.name}</h1>
${notice === null ? "" : html`<p class="notice" role="status">${notice}</p>`}
<p>Enter your email address and we will send you a one-time code. There is no password.</p>
<form method="post" action="${portalPath(portal.id)}sign-in">${csrfInput(csrf)}
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">Send me a code</button>
</form></main>`
  )

/** The code form for `email`; `error` is linked to the field. */
export const codePage = (portal: PortalRow, csrf: string, email: string, error: string | null): string =>
  page(
    `Enter your code – ${portal.name}`,
    html`<main><h1>Enter your code</h1>
${error === null ? html`<p role="status">${neutralSentText}</p>` : ""}
<form method="post" action="${portalPath(portal.id)}verify">${csrfInput(csrf)}
<input type="hidden" name="email" value="${email}">
<label for="code">6-digit code sent to ${email}</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9 -]*" maxlength="9" autocomplete="one-time-code" required
${error === null ? "" : html` aria-invalid="true" aria-describedby="code-error"`}>
${error === null ? "" : html`<p id="code-error" class="error">${error}</p>`}
<button type="submit">Sign in</button>
</form>
<form method="post" action="${portalPath(portal.id)}sign-in">${csrfInput(csrf)}<input type="hidden" name="email" value="${email}">
<button type="submit">Send a new code</button></form></main>`
  )

/** The plain page of a request refused for a missing or wrong CSRF token. */
export const forbiddenPage = (): string =>
  page("Form expired", html`<main><h1>This form has expired</h1><p>Go back, reload the page and try again.</p></main>`)

/** The plain page of an unknown Portal or page. */
export const notFoundPage = (): string => page("Not found", html`<main><h1>Not found</h1><p>There is no such page here.</p></main>`)

/** The plain page of a form sent with a body over the server's request limit (nothing was done). */
export const tooLargePage = (limitBytes: number): string =>
  page(
    "Too large",
    html`<main><h1>Too large</h1><p>What you sent is over the ${String(limitBytes / 1_000_000)} MB this server takes in one request. Nothing was done. Send less, and try again.</p></main>`
  )

/** The plain page of a request over the person's request rate (nothing was done). */
export const rateLimitedPage = (retryAfterSeconds: number): string =>
  page(
    "Too many requests",
    html`<main><h1>Too many requests</h1><p>You sent more requests than this Portal takes in a minute. Nothing was done. Try again in ${String(retryAfterSeconds)} seconds.</p></main>`
  )
