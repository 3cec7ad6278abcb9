/**
 * Pure helpers of Knowledgebase search: the words of a query, the FTS5 expression they make (each
 * word quoted, so no user text is ever read as FTS5 syntax), and highlighted snippets.
 */

/** The most words a query contributes. */
export const maxQueryTerms = 32

/** The distinct lower-case words (letters and digits) of a query, in order. */
export const queryTerms = (query: string): Array<string> => {
  const words = query.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  return [...new Set(words)].slice(0, maxQueryTerms)
}

/**
 * An FTS5 MATCH expression: any of the words (BM25 ranks passages holding more of them, and rarer
 * ones, first). Words are quoted, so `AND`, `NEAR` or `*` in a query are just words.
 */
export const matchExpression = (terms: ReadonlyArray<string>): string => terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(" OR ")

const snippetChars = 240
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A short excerpt of `text` around the first word of the query it holds, with the matching words
 * in `**bold**`. Words match by their stem-like prefix, as the index's Porter stemmer does
 * (`refunds` finds `refund`).
 */
export const snippetOf = (text: string, terms: ReadonlyArray<string>): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  const stems = terms.map((term) => (term.length > 5 ? term.slice(0, Math.max(5, term.length - 2)) : term))
  const pattern = stems.length === 0 ? null : new RegExp(`(?<![\\p{L}\\p{N}])(?:${stems.map(escapeRegExp).join("|")})[\\p{L}\\p{N}]*`, "giu")
  const first = pattern ? flat.search(pattern) : -1
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
  const excerpt = flat.slice(start, end)
  const marked = pattern ? excerpt.replace(pattern, (word) => `**${word}**`) : excerpt
  return `${start > 0 ? "…" : ""}${marked}${end < flat.length ? "…" : ""}`
}
