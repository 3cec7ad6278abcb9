/** The plain page of a request refused for where it came from (its `Origin` or `Host`), as the Portal and the sign-in pages show it. */
import { html, page } from "./html.js"

/** The page of a form or page request refused for its origin: `reason` says which and what to do; nothing was done. */
export const originRefusedPage = (reason: string): string =>
  page("Not allowed from there", html`<main><h1>Not allowed from there</h1><p>${reason}</p><p>Nothing was done.</p></main>`)
