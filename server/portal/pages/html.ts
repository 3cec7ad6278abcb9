/**
 * HTML building for the Portal's pages: escaping of every interpolated value, the page layout, and
 * the CSRF hidden field. Pages are plain server-rendered HTML, no build step, usable without JS.
 */
import { csrfField } from "../../identity/sign-in/csrf.js"

/** Text made safe for HTML content and attribute values. */
export const escapeHtml = (value: string): string =>
  value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** Already-escaped HTML. */
export interface Html {
  readonly html: string
}

/** A template tag: interpolated strings are escaped, `Html` values and arrays of them kept. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Html => ({
  html: strings.reduce((out, part, i) => out + part + (i < values.length ? render(values[i]) : ""), "")
})

const render = (value: unknown): string => {
  if (value === null || value === undefined || value === false) return ""
  if (Array.isArray(value)) return value.map(render).join("")
  if (typeof value === "object" && "html" in value) return (value as Html).html
  return escapeHtml(String(value))
}

/** The hidden CSRF field of a form. */
export const csrfInput = (token: string): Html => html`<input type="hidden" name="${csrfField}" value="${token}">`

const styles = `body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
label{display:block;font-weight:600;margin-top:1rem}input,textarea{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}
button{font:inherit;margin-top:1rem;padding:.4rem 1rem}.error{color:#a00}.notice{background:#eef;padding:.5rem 1rem}
.message{border-left:3px solid #ccc;padding:.25rem .75rem;margin:.5rem 0;white-space:pre-wrap}.assistant{border-color:#36c}
.reply{white-space:normal}.reply.streaming{white-space:pre-wrap}.reply>:first-child{margin-top:.25rem}.reply>:last-child{margin-bottom:.25rem}
.reply pre{overflow-x:auto;background:#f4f4f4;padding:.5rem}.reply blockquote{margin:.5rem 0;padding-left:.75rem;border-left:3px solid #ddd;color:#444}
.reply table{border-collapse:collapse}.reply th,.reply td{border:1px solid #ccc;padding:.2rem .5rem}
header{display:flex;justify-content:space-between;align-items:center;gap:1rem}`

/** A whole page: `title` (escaped) in the title bar, `body` as given. */
export const page = (title: string, body: Html, options: { readonly script?: string } = {}): string =>
  `<!doctype html>\n${
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${{ html: styles }}</style></head>
<body>${body}${options.script === undefined ? "" : { html: `<script>${options.script}</script>` }}</body></html>`.html
  }\n`
