/**
 * The second stage of search: the candidates the index found (passages, pages) scored again with
 * the organization's own statistics, on one scale. Each candidate has two fields, a title (a
 * document's name and section, a page's title) and a body; a word's frequency is BM25F's
 * weighted sum of both (the body's normalized by its length against the average of its kind),
 * saturated once and weighted by the word's IDF over the organization's passages and pages.
 * Then pseudo-relevance feedback (RM3 as Anserini's: the words of the ten best candidates,
 * weighted by their scores, the ten strongest added with a fifth of the query's weight; Anserini's
 * default half hurt CISI's long queries, see docs/performance.md) ranks the candidates again, when a query has enough hits for that to mean something. Pure functions: the statistics come in, scores go out.
 */
import { stemCounts, wordCount } from "./analyzer.js"

/** BM25's saturation. */
export const k1 = 1.2
/** BM25's length normalization of bodies. */
export const b = 0.75
/** How much a word in a title counts against one in the body (titles are not length-normalized). */
export const titleWeight = 2
/**
 * Feedback: how many of the best candidates, how many of their words, the original query's share,
 * and the fewest hits (documents, pages) a query must have for feedback to run: with fewer, the
 * "best ten" are most of the answer, and their words only reorder it by chance.
 */
export const feedback = { documents: 10, terms: 10, originalWeight: 0.8, minimumHits: 20 } as const

/** The kinds of candidates that share one scale. */
export type CandidateKind = "document" | "page" | "memory"

/** A candidate as the second stage reads it. */
export interface Candidate {
  readonly kind: CandidateKind
  readonly title: string
  readonly body: string
}

/** What the organization's statistics say: candidates in all, average body lengths, and frequencies. */
export interface Statistics {
  /** Passages and pages of the organization (memories: the member's memories). */
  readonly units: number
  /** Average body length in words, by kind. */
  readonly averageLength: (kind: CandidateKind) => number
}

/** A candidate's words, counted once. */
export interface Analyzed {
  readonly title: ReadonlyMap<string, number>
  readonly body: ReadonlyMap<string, number>
  readonly length: number
}

/** Reads a candidate's fields into stem counts (stop words left out; with `only`, just those stems). */
export const analyze = (candidate: Candidate, only?: ReadonlySet<string>): Analyzed => ({
  title: stemCounts(candidate.title, only),
  body: stemCounts(candidate.body, only),
  length: wordCount(candidate.body)
})

/** A candidate read again for more words (its length is known): both readings as one. */
export const withCounts = (first: Analyzed, candidate: Candidate, only: ReadonlySet<string>): Analyzed => ({
  title: new Map([...first.title, ...stemCounts(candidate.title, only)]),
  body: new Map([...first.body, ...stemCounts(candidate.body, only)]),
  length: first.length
})

/** Lucene's IDF: never negative. */
export const idf = (units: number, frequency: number): number =>
  Math.log1p((Math.max(units, frequency) - frequency + 0.5) / (frequency + 0.5))

/** A weighted query: each stem with its weight and IDF. */
export type WeightedQuery = ReadonlyArray<{ readonly stem: string; readonly weight: number; readonly idf: number }>

/** BM25F score of one analyzed candidate for a weighted query. */
export const score = (analyzed: Analyzed, kind: CandidateKind, query: WeightedQuery, statistics: Statistics): number => {
  const average = Math.max(1, statistics.averageLength(kind))
  const norm = 1 - b + (b * analyzed.length) / average
  let total = 0
  for (const term of query) {
    const frequency = titleWeight * (analyzed.title.get(term.stem) ?? 0) + (analyzed.body.get(term.stem) ?? 0) / norm
    if (frequency > 0) total += term.weight * term.idf * ((frequency * (k1 + 1)) / (frequency + k1))
  }
  return total
}

/**
 * RM3's expansion words from the best candidates: each word's share of its candidate's words,
 * weighted by the candidate's share of the best scores, summed; the `feedback.terms` strongest
 * that are neither query words, stop words, single characters nor numbers.
 */
export const expansionTerms = (
  best: ReadonlyArray<{ readonly analyzed: Analyzed; readonly score: number }>,
  queryStems: ReadonlySet<string>
): ReadonlyArray<{ readonly stem: string; readonly weight: number }> => {
  const total = best.reduce((sum, hit) => sum + hit.score, 0)
  if (total <= 0) return []
  const weights = new Map<string, number>()
  for (const hit of best) {
    const words = new Map(hit.analyzed.body)
    for (const [stem, count] of hit.analyzed.title) words.set(stem, (words.get(stem) ?? 0) + count)
    let length = 0
    for (const count of words.values()) length += count
    if (length === 0) continue
    for (const [stem, count] of words) {
      if (queryStems.has(stem) || stem.length < 2 || /^\d+$/.test(stem)) continue
      weights.set(stem, (weights.get(stem) ?? 0) + (count / length) * (hit.score / total))
    }
  }
  const ranked = [...weights].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, feedback.terms)
  const sum = ranked.reduce((acc, [, weight]) => acc + weight, 0)
  return sum > 0 ? ranked.map(([stem, weight]) => ({ stem, weight: weight / sum })) : []
}

/**
 * RM3's interpolation: the original words (each `1/n` of the original share) and the expansion
 * words (their normalized weights times the rest).
 */
export const expandedQuery = (
  original: WeightedQuery,
  expansion: ReadonlyArray<{ readonly stem: string; readonly weight: number }>,
  idfOf: (stem: string) => number
): WeightedQuery => {
  if (expansion.length === 0) return original
  const share = feedback.originalWeight
  const originalTotal = original.reduce((sum, term) => sum + term.weight, 0) || 1
  return [
    ...original.map((term) => ({ ...term, weight: (share * term.weight) / originalTotal })),
    ...expansion.map((term) => ({ stem: term.stem, weight: (1 - share) * term.weight, idf: idfOf(term.stem) }))
  ]
}
