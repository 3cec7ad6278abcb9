/**
 * A reply's markdown drawn for a terminal by `marked` with `marked-terminal`: bold, italics,
 * headings, quotes, lists, code and tables as escape codes, wrapped to the terminal's width, no
 * markdown marker left. Loaded only when `svc chat` draws on a terminal (it is a large module).
 * The styles are ours, not chalk's detected ones: the caller knows it draws on a terminal, and
 * `NO_COLOR` keeps the layout without escape codes. Links are drawn as `text (address)`, never as
 * terminal hyperlinks, which the chat's layout would count as visible text; control characters of
 * the reply never reach the terminal (marked-terminal strips them).
 */
import { Marked } from "marked"
import { markedTerminal } from "marked-terminal"

/** How a reply is drawn. */
export interface TerminalMarkdownOptions {
  /** The terminal's width in characters. */
  readonly columns: number
  /** Whether escape codes (bold, italics, colours) may be written; false keeps the layout alone. */
  readonly color: boolean
}

/** A style writing SGR `open` before the text and `close` after it. */
const sgr =
  (open: string, close: string) =>
  (text: string): string =>
    `\u001b[${open}m${text}\u001b[${close}m`

const plain = (text: string): string => text

/** Composes styles, innermost last. */
const both =
  (...styles: ReadonlyArray<(text: string) => string>) =>
  (text: string): string =>
    styles.reduceRight((out, style) => style(out), text)

const bold = sgr("1", "22")
const italic = sgr("3", "23")
const underline = sgr("4", "24")
const dim = sgr("2", "22")
const strike = sgr("9", "29")
const yellow = sgr("33", "39")
const green = sgr("32", "39")
const magenta = sgr("35", "39")
const blue = sgr("34", "39")

const styles = (color: boolean) => {
  const style = color ? (s: (text: string) => string) => s : () => plain
  return {
    strong: style(bold),
    em: style(italic),
    heading: style(both(green, bold)),
    firstHeading: style(both(magenta, bold)),
    codespan: style(yellow),
    code: style(yellow),
    blockquote: style(italic),
    del: style(both(dim, strike)),
    link: style(blue),
    href: style(both(blue, underline)),
    html: style(dim),
    hr: plain,
    listitem: plain,
    table: plain,
    paragraph: plain,
    text: plain
  }
}

/** C0 and C1 control characters, DEL: never written to the terminal from a reply. */
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/g

const renderers = new Map<string, Marked>()

/** One configured `marked` per width and colour choice (a chat draws many replies at one width). */
const rendererFor = ({ columns, color }: TerminalMarkdownOptions): Marked => {
  const key = `${columns}:${color}`
  let marked = renderers.get(key)
  if (marked === undefined) {
    marked = new Marked(
      markedTerminal({ ...styles(color), width: Math.max(20, columns), reflowText: true, emoji: false, showSectionPrefix: false, tab: 2,
        // cli-table3 colours a table's borders and header itself.
        tableOptions: color ? {} : { style: { head: [], border: [] } } }),
      {
        renderer: {
          // marked-terminal draws a tight list item's text token raw (its bold and links as markers); its inline tokens are drawn here.
          text(token) {
            return "tokens" in token && token.tokens !== undefined ? this.parser.parseInline(token.tokens) : false
          },
          link(token) {
            const text = this.parser.parseInline(token.tokens)
            const address = token.href.replace(controlCharacters, "")
            const { link, href } = styles(color)
            return link(text === address ? href(address) : `${text} (${href(address)})`)
          }
        }
      }
    )
    renderers.set(key, marked)
  }
  return marked
}

/** `markdown` drawn for a terminal, without trailing blank lines. */
export const renderTerminalMarkdown = (markdown: string, options: TerminalMarkdownOptions): string =>
  (rendererFor(options).parse(markdown, { async: false }) as string).replace(/\s+$/, "")

/** Whether the environment asks for no colour (`NO_COLOR` set and not empty, as no-color.org says). */
export const colorAllowed = (env: Readonly<Record<string, string | undefined>>): boolean => (env["NO_COLOR"] ?? "") === ""
