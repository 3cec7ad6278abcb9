/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009): each ranking adds
 * `1 / (k + rank)` (rank from 1) to the score of every id it holds, so an id near the top of
 * several rankings beats one at the top of a single ranking, and raw scores of different scales
 * (BM25, cosine similarity) never need to be compared. `k = 60` is the paper's constant.
 */

/**
 * The fused score of every id in `rankings` (each a list of ids, best first; an id repeated
 * within one ranking counts at its best rank only). Sort the entries by score, highest first,
 * for the fused ranking. Throws a `RangeError` when `k` is negative or not finite.
 */
export const reciprocalRankFusion = (rankings: ReadonlyArray<ReadonlyArray<string>>, k = 60): Map<string, number> => {
  if (!Number.isFinite(k) || k < 0) throw new RangeError(`reciprocalRankFusion: k must be a finite number of 0 or more, not ${k}`)
  const scores = new Map<string, number>()
  for (const ranking of rankings) {
    const seen = new Set<string>()
    ranking.forEach((id, index) => {
      if (seen.has(id)) return
      seen.add(id)
      scores.set(id, (scores.get(id) ?? 0) + 1 / (k + index + 1))
    })
  }
  return scores
}

/** The ids of `scores` from the highest score down; ties keep the order in which ids were first seen. */
export const fusedOrder = (scores: ReadonlyMap<string, number>): Array<string> =>
  [...scores.entries()].map(([id, score], seen) => ({ id, score, seen })).sort((a, b) => b.score - a.score || a.seen - b.seen).map((entry) => entry.id)
