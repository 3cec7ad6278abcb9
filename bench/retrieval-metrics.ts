/**
 * Ranking metrics of `npm run bench:retrieval`, over binary relevance judgments (a document is
 * relevant to a query or not; CISI and MEDLINE grade nothing):
 *
 * - nDCG@k: DCG = Σ over ranks i = 1…k of rel(i) / log2(i + 1), divided by the DCG of an ideal
 *   ranking (every relevant document first, as many as fit in k).
 * - MAP@k: average precision over the top k, divided by the number of relevant documents (not by
 *   the number found), so a relevant document missing from the top k counts as a zero.
 * - Recall@k: the share of the relevant documents found in the top k.
 *
 * A ranking is a list of document ids, best first, each once (callers keep a document's first hit).
 */

/** Throws when a ranking lists a document twice (every metric assumes distinct documents). */
const checkDistinct = (ranking: ReadonlyArray<string>): void => {
  if (new Set(ranking).size !== ranking.length) throw new Error("a ranking must list each document once")
}

/** nDCG@k with binary gains and the log2(rank + 1) discount; 0 when nothing is relevant. */
export const ndcgAt = (ranking: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): number => {
  checkDistinct(ranking)
  let dcg = 0
  ranking.slice(0, k).forEach((id, index) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(index + 2)
  })
  let ideal = 0
  for (let index = 0; index < Math.min(k, relevant.size); index++) ideal += 1 / Math.log2(index + 2)
  return ideal === 0 ? 0 : dcg / ideal
}

/** Average precision over the top k, divided by the number of relevant documents; 0 when none is. */
export const averagePrecisionAt = (ranking: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): number => {
  checkDistinct(ranking)
  if (relevant.size === 0) return 0
  let found = 0
  let sum = 0
  ranking.slice(0, k).forEach((id, index) => {
    if (relevant.has(id)) {
      found += 1
      sum += found / (index + 1)
    }
  })
  return sum / relevant.size
}

/** The share of the relevant documents within the top k; 0 when none is relevant. */
export const recallAt = (ranking: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): number => {
  checkDistinct(ranking)
  if (relevant.size === 0) return 0
  return ranking.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size
}

/** The metrics the benchmark reports. */
export interface RetrievalScores {
  readonly ndcg10: number
  readonly map100: number
  readonly recall10: number
}

/** The three metrics of one query's ranking. */
export const scoreRanking = (ranking: ReadonlyArray<string>, relevant: ReadonlySet<string>): RetrievalScores => ({
  ndcg10: ndcgAt(ranking, relevant, 10),
  map100: averagePrecisionAt(ranking, relevant, 100),
  recall10: recallAt(ranking, relevant, 10)
})

/**
 * The mean of each metric over the queries that have at least one relevant document (a query
 * without judgments is left out, not counted as a zero). `rankings` maps query ids to rankings; a
 * judged query missing from it counts as an empty ranking (all zeros).
 */
export const meanScores = (
  rankings: ReadonlyMap<string, ReadonlyArray<string>>,
  judgments: ReadonlyMap<string, ReadonlySet<string>>
): RetrievalScores & { readonly queries: number } => {
  const judged = [...judgments].filter(([, relevant]) => relevant.size > 0)
  if (judged.length === 0) return { ndcg10: 0, map100: 0, recall10: 0, queries: 0 }
  const total = { ndcg10: 0, map100: 0, recall10: 0 }
  for (const [queryId, relevant] of judged) {
    const scores = scoreRanking(rankings.get(queryId) ?? [], relevant)
    total.ndcg10 += scores.ndcg10
    total.map100 += scores.map100
    total.recall10 += scores.recall10
  }
  return {
    ndcg10: total.ndcg10 / judged.length,
    map100: total.map100 / judged.length,
    recall10: total.recall10 / judged.length,
    queries: judged.length
  }
}

/**
 * A ranking of distinct documents from search hits, best first: each hit maps to its documents
 * (`documentsOf`: none when the hit is not one of the collection's documents, several when the
 * service keeps identical documents as one), the first hit of a document counts, later ones are
 * passed over; at most `k` documents.
 */
export const firstHitPerDocument = <Hit>(hits: ReadonlyArray<Hit>, documentsOf: (hit: Hit) => ReadonlyArray<string>, k: number): Array<string> => {
  const seen = new Set<string>()
  const ranking: Array<string> = []
  for (const hit of hits) {
    for (const id of documentsOf(hit)) {
      if (ranking.length >= k) return ranking
      if (seen.has(id)) continue
      seen.add(id)
      ranking.push(id)
    }
  }
  return ranking
}
