/**
 * The reference of `npm run bench:retrieval`: a plain BM25 by a maintained library (`minisearch`),
 * computed in the same run as svc's search, so every figure of svc stands beside the floor a
 * textbook ranking reaches on the same documents and queries.
 *
 * - One field holding the title and the text (a document with no title: the text alone).
 * - Terms: minisearch's tokenizer (whitespace and punctuation), lower-cased, English stop words of
 *   the `stopword` package dropped, Porter-stemmed (`stemmer`, the stemmer svc's search uses too).
 * - Scoring: BM25 with k1 = 1.2, b = 0.75 and no BM25+ lower bound (`d: 0`); IDF as minisearch
 *   computes it, ln(1 + (N − n + 0.5) / (n + 0.5)). Query words combine with OR; no prefix or fuzzy
 *   matching.
 */
import MiniSearch from "minisearch"
import { stemmer } from "stemmer"
import type { CollectionDocument } from "./retrieval-smart.js"
import { englishStopWords } from "./stopwords.js"

/** The BM25 parameters of the reference. */
export const referenceBm25 = { k: 1.2, b: 0.75, d: 0 } as const

/** A term as the reference indexes and searches it: lower-case, no stop word, Porter-stemmed. */
export const referenceTerm = (term: string): string | null => {
  const lower = term.toLowerCase()
  if (lower === "" || englishStopWords.has(lower)) return null
  return stemmer(lower)
}

/** The reference index over a collection's documents: `rank(query, k)` gives the top k document ids. */
export interface ReferenceIndex {
  readonly rank: (query: string, k: number) => Array<string>
}

/** Indexes `documents` (title and text in one field) for the reference BM25. */
export const referenceIndex = (documents: ReadonlyArray<CollectionDocument>): ReferenceIndex => {
  const search = new MiniSearch<{ id: string; body: string }>({
    fields: ["body"],
    storeFields: [],
    processTerm: referenceTerm,
    searchOptions: { bm25: referenceBm25, combineWith: "OR", prefix: false, fuzzy: false }
  })
  search.addAll(documents.map((d) => ({ id: d.id, body: d.title === null ? d.text : `${d.title}\n\n${d.text}` })))
  return {
    rank: (query, k) =>
      search
        .search(query)
        .sort((a, b) => b.score - a.score || compareIds(String(a.id), String(b.id)))
        .slice(0, k)
        .map((hit) => String(hit.id))
  }
}

/** Document ids in numeric order when both are numbers (the collections' ids are), else as text. */
const compareIds = (a: string, b: string): number => {
  const byNumber = Number(a) - Number(b)
  return Number.isNaN(byNumber) ? (a < b ? -1 : a > b ? 1 : 0) : byNumber
}
