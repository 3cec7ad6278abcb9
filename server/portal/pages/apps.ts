/** The signed-in pages: the list of Apps and the chat with one. */
import type { ChatMessage } from "../chat.js"
import type { PortalAppRow } from "../repo.js"
import type { SignedIn } from "../service.js"
import { portalPath } from "../../identity/sign-in/cookies.js"
import { chatScript } from "./chat-script.js"
import { csrfInput, type Html, html, page } from "./html.js"
import { markdownHtml } from "./markdown.js"

const header = (signedIn: SignedIn, csrf: string): Html =>
  html`<header><p>Signed in as ${signedIn.endUser.email}</p>
<form method="post" action="${portalPath(signedIn.portal.id)}sign-out">${csrfInput(csrf)}<button type="submit">Sign out</button></form></header>`

/** The Apps the person may use here. */
export const appsPage = (signedIn: SignedIn, csrf: string, apps: ReadonlyArray<PortalAppRow>): string =>
  page(
    signedIn.portal.name,
    html`${header(signedIn, csrf)}<main><h1>${signedIn.portal.name}</h1><h2>Your Apps</h2>
${
  apps.length === 0
    ? html`<p>No Apps are available to you here yet.</p>`
    : html`<ul>${apps.map(
        (app) => html`<li><a href="${portalPath(signedIn.portal.id)}apps/${encodeURIComponent(app.id)}">${app.name}</a>${
          app.description === "" ? "" : html` – ${app.description}`
        }</li>`
      )}</ul>`
}</main>`
  )

/** A message's text: the person's as written, the App's markdown as sanitized HTML. */
const messageBody = (message: ChatMessage): Html =>
  message.role === "user" ? html`<span>${message.text}</span>` : html`<div class="reply">${markdownHtml(message.text)}</div>`

/** A chat with an App: the conversation so far (the App's replies drawn from their markdown), an error (linked to the message field), the form. */
export const chatPage = (
  signedIn: SignedIn,
  csrf: string,
  app: PortalAppRow,
  chat: { readonly conversationId: string | null; readonly messages: ReadonlyArray<ChatMessage>; readonly error: string | null }
): string =>
  page(
    `${app.name} – ${signedIn.portal.name}`,
    html`${header(signedIn, csrf)}<main><p><a href="${portalPath(signedIn.portal.id)}">All Apps</a></p>
<h1>${app.name}</h1>${app.description === "" ? "" : html`<p>${app.description}</p>`}
<h2>Conversation</h2>
<div id="messages" aria-live="polite">${chat.messages.map(
      (message) =>
        html`<div class="message ${message.role}"><strong>${message.role === "user" ? "You" : app.name}:</strong> ${messageBody(message)}</div>`
    )}</div>
${chat.error === null ? "" : html`<p id="message-error" class="error" role="alert">${chat.error}</p>`}
<form id="chat" method="post" action="${portalPath(signedIn.portal.id)}apps/${encodeURIComponent(app.id)}">${csrfInput(csrf)}
<input type="hidden" name="conversation_id" value="${chat.conversationId ?? ""}">
<label for="message">Your message</label>
<textarea id="message" name="message" rows="3" required${chat.error === null ? "" : html` aria-describedby="message-error"`}></textarea>
<button type="submit">Send</button>
</form></main>`,
    { script: chatScript(app.name) }
  )
