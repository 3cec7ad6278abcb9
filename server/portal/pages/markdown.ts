/**
 * An assistant message's markdown as the Portal shows it: HTML made by `marked` (GitHub-flavoured
 * markdown), then sanitized by `sanitize-html` to an allowlist of text elements. A reply is written
 * by a model (or quotes documents anyone in the organization could upload), so it is untrusted:
 * raw HTML in it is shown as text, never as markup; links keep only absolute `http:`, `https:` and
 * `mailto:` addresses (none relative, into the Portal) and open nothing of the page (`rel="nofollow noopener noreferrer"`); images are dropped
 * (no request leaves the page for them); no attribute but a link's address and title, a list's start
 * and a table cell's alignment survives. Rendered on the server, so the chat shows the same HTML
 * with or without JS.
 */
import { Marked } from "marked"
import sanitizeHtml from "sanitize-html"
import { escapeHtml, type Html } from "./html.js"

const marked = new Marked({
  gfm: true,
  renderer: {
    // Raw HTML of the reply is text, escaped, never markup.
    html: (token) => (token.block ? `<p>${escapeHtml(token.text.trim())}</p>\n` : escapeHtml(token.text)),
    image: (token) => escapeHtml(token.text)
  }
})

/** A link's attributes: its address only when absolute `http:`, `https:` or `mailto:` (no address into the Portal either), and our `rel`. */
const linkAttributes = ({ href, title }: sanitizeHtml.Attributes): sanitizeHtml.Attributes => ({
  ...(href !== undefined && /^(https?:|mailto:)/i.test(href.trim()) ? { href } : {}),
  ...(title === undefined ? {} : { title }),
  rel: "nofollow noopener noreferrer"
})

/** The elements and attributes a rendered reply keeps. */
const allowlist: sanitizeHtml.IOptions = {
  allowedTags: ["p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td"],
  allowedAttributes: { a: ["href", "title", "rel"], ol: ["start"], th: ["align"], td: ["align"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "escape",
  transformTags: { a: (_tagName, attribs) => ({ tagName: "a", attribs: linkAttributes(attribs) }) }
}

/** `markdown` as sanitized HTML for the Portal's pages. */
export const markdownHtml = (markdown: string): Html => ({
  html: sanitizeHtml(marked.parse(markdown, { async: false }) as string, allowlist).trim()
})
