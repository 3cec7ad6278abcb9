/**
 * Clean quotes of search passages for the builtin model's markdown reply. A search snippet is a
 * window of the passage's own markdown with the search's `**` highlights added, so it can hold
 * nested (`**2-year **warranty****`) or cut-off (`…a **2-year`) markers and markdown syntax of
 * the page (headings, links, HTML). A quote is that snippet as plain text (read by a CommonMark
 * parser, every marker dropped), escaped so it reads as written when rendered, with the words of
 * the question that are not stop words in bold, matched by stem as the index matches them.
 */
import type { Nodes } from "mdast"
import { fromMarkdown } from "mdast-util-from-markdown"
import { isStopWord, stemOf, wordPattern } from "../knowledge/search/analyzer.js"

/** The text of a parsed inline tree: text and code as written, raw HTML dropped. */
const textOf = (node: Nodes): string => {
  if (node.type === "text" || node.type === "inlineCode") return node.value
  if (node.type === "html") return ""
  if (node.type === "break") return " "
  return "children" in node ? node.children.map((child) => textOf(child)).join("") : ""
}

/**
 * `snippet` as plain text: markdown emphasis, highlight markers (balanced or not), heading marks,
 * link syntax (the link's text kept), code backticks and HTML tags dropped, entities decoded,
 * whitespace collapsed.
 */
export const plainTextOf = (snippet: string): string => {
  const flat = snippet
    .replace(/\s+/g, " ")
    .replace(/(^|\s)#{1,6}(?=\s)/g, "$1")
    .trim()
  if (flat === "") return ""
  // A leading word keeps the whole line one paragraph: "1) …", "- …" or "> …" stay text, not blocks.
  const parsed = textOf(fromMarkdown(`a ${flat}`)).slice(2)
  return parsed.replace(/\*{2,}/g, "").replace(/\s+/g, " ").trim()
}

/**
 * Plain text escaped for markdown inside a line: characters that would start emphasis, code,
 * links, HTML, strikethrough or an entity (`&amp;` stays those five characters) are
 * backslash-escaped (an underscore only where it could emphasize, not inside a word).
 */
export const escapeMarkdown = (text: string): string =>
  text
    .replace(/[\\`*[\]<~]|&(?=#?[\p{L}\p{N}]+;)/gu, "\\$&")
    .replace(/_/g, (underscore, at: number, whole: string) =>
      /[\p{L}\p{N}]/u.test(whole[at - 1] ?? "") && /[\p{L}\p{N}]/u.test(whole[at + 1] ?? "") ? underscore : "\\_"
    )

/** Escaped as {@link escapeMarkdown}, and a leading character that would start a block (`#`, `>`, a list marker) too. */
const escapeLine = (text: string): string =>
  escapeMarkdown(text).replace(/^([#>+-]|\d+(?=[.)]))/, (start) => (/^\d/.test(start) ? `${start}\\` : `\\${start}`))

/**
 * The stems of the words of `question` worth highlighting: its words that are not stop words (a
 * question made only of stop words highlights nothing).
 */
export const highlightStems = (question: string): ReadonlySet<string> =>
  new Set([...question.normalize("NFKC").matchAll(wordPattern)].map((word) => word[0]).filter((word) => !isStopWord(word)).map(stemOf))

/**
 * Plain `text` as a line of markdown with every word whose stem is in `stems` in bold. Each bold run is one
 * whole word of escaped text, so markers never nest and always close, and a stop word is never bold.
 */
export const highlightedMarkdown = (text: string, stems: ReadonlySet<string>): string =>
  escapeLine(text).replace(wordPattern, (word) => (stems.size > 0 && !isStopWord(word) && stems.has(stemOf(word)) ? `**${word}**` : word))
