/**
 * The part of marked-terminal 7's API `svc chat` uses (the package ships no types; the
 * `@types/marked-terminal` package pins a marked older than 12). See
 * node_modules/marked-terminal/README.md.
 */
declare module "marked-terminal" {
  import type { MarkedExtension } from "marked"

  /** A style: text in, text with escape codes out. */
  type Style = (text: string) => string

  /** Options of the terminal renderer (styles default to chalk's, detected on the process's stdout). */
  interface TerminalRendererOptions {
    readonly code?: Style
    readonly blockquote?: Style
    readonly html?: Style
    readonly heading?: Style
    readonly firstHeading?: Style
    readonly hr?: Style
    readonly listitem?: Style
    readonly table?: Style
    readonly paragraph?: Style
    readonly strong?: Style
    readonly em?: Style
    readonly codespan?: Style
    readonly del?: Style
    readonly link?: Style
    readonly href?: Style
    readonly text?: Style
    /** Decode HTML entities. */
    readonly unescape?: boolean
    /** Turn `:name:` into emoji. */
    readonly emoji?: boolean
    /** Line width for `reflowText`. */
    readonly width?: number
    /** Wrap paragraphs at `width`. */
    readonly reflowText?: boolean
    /** Show `#` before headings. */
    readonly showSectionPrefix?: boolean
    readonly tab?: number
    /** Options of cli-table3 for tables. */
    readonly tableOptions?: Readonly<Record<string, unknown>>
  }

  /** The marked extension rendering for a terminal. */
  export function markedTerminal(options?: TerminalRendererOptions, highlightOptions?: Record<string, unknown>): MarkedExtension
}
