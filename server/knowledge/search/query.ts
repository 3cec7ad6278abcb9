/**
 * Pure helpers of Knowledgebase search: the words of a query, the FTS5 expression they make (each
 * word quoted, so no user text is ever read as FTS5 syntax), and highlighted snippets.
 */
import { isStopWord, stemMatcher, stemOf, wordPattern } from "./analyzer.js"

/** The most words (stop words aside) a query contributes. */
export const maxQueryTerms = 32

/** Every lower-case word (letters and digits) of a query, in order, repeats included. */
export const queryWords = (query: string): Array<string> => query.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/**
 * The distinct lower-case words of a query, in order, up to {@link maxQueryTerms} words that are
 * not stop words (the stop words among them come along and count for nothing).
 */
export const queryTerms = (query: string): Array<string> => {
  const terms: Array<string> = []
  let keywords = 0
  for (const word of new Set(queryWords(query))) {
    const keyword = !isStopWord(word)
    if (keyword && keywords === maxQueryTerms) break
    if (keyword) keywords++
    terms.push(word)
  }
  return terms
}

/**
 * An FTS5 MATCH expression: any of the words (BM25 ranks passages holding more of them, and rarer
 * ones, first). Words are quoted, so `AND`, `NEAR` or `*` in a query are just words.
 */
export const matchExpression = (terms: ReadonlyArray<string>): string => terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(" OR ")

const snippetChars = 240

/** The stems of the query's words that may be highlighted: never a stop word's. */
const stemsOf = (terms: ReadonlyArray<string>): Set<string> =>
  new Set(
    terms
      .flatMap((term) => term.match(wordPattern) ?? [])
      .filter((word) => !isStopWord(word))
      .map(stemOf)
  )

/** Whether texts hold a word of a query, and their snippets for it: the query's words read once. */
export interface QueryMatcher {
  /** Whether `text` holds a word of the query (by stem, as the index matches). */
  readonly mentions: (text: string) => boolean
  /** {@link snippetOf} `text` for the query. */
  readonly snippet: (text: string) => string
}

/** A {@link QueryMatcher} for `terms` (a query's words), to use on many texts. */
export const queryMatcher = (terms: ReadonlyArray<string>): QueryMatcher => {
  const matcher = stemMatcher(stemsOf(terms))
  const bold = (word: string) => `**${word}**`
  return {
    mentions: (text) => matcher.first(text) >= 0,
    snippet: (text) => {
      // The text's own strong markers go, so a highlight never nests in one (`**2-year **warranty****`).
      const unmarked = text.includes("**") || text.includes("__") ? text.replace(/\*\*|__/g, "") : text
      const flat = unmarked.replace(/\s+/g, " ").trim()
      const first = matcher.first(flat)
      let start = first < 0 ? 0 : Math.max(0, first - Math.floor(snippetChars / 3))
      if (start > 0) {
        const space = flat.indexOf(" ", start)
        if (space >= 0 && space < first) start = space + 1
      }
      let end = Math.min(flat.length, start + snippetChars)
      if (end < flat.length) {
        const space = flat.lastIndexOf(" ", end)
        if (space > start + snippetChars / 2) end = space
      }
      return `${start > 0 ? "…" : ""}${matcher.mark(flat.slice(start, end), bold)}${end < flat.length ? "…" : ""}`
    }
  }
}

/**
 * A short excerpt of `text` around the first word of the query it holds, with the matching words
 * in `**bold**` and no other strong markers (never a stop word: "to" or "the" is not what a reader
 * looks for). Words match by stem, as the index's Porter stemmer does (`policies` finds `policy`),
 * never by a part of a longer word. For many texts of one query, {@link queryMatcher}.
 */
export const snippetOf = (text: string, terms: ReadonlyArray<string>): string => queryMatcher(terms).snippet(text)
