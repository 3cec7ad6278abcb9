/**
 * BM25 scores that stay real in a small index. FTS5's `bm25()` takes a word's IDF as
 * `ln((N − n + 0.5) / (n + 0.5))` over the whole table and floors it to 1e-6 when the word is in
 * half of the rows or more, so in an index of a few passages every hit scores about 0 and a passage
 * holding both words of a query ranks no better than one holding one. Lucene's IDF,
 * `ln(1 + (N − n + 0.5) / (n + 0.5))`, is always positive and almost equal for rare words.
 *
 * When a query word is common enough for the two to differ (FTS5's ratio under 4: the word is in
 * more than about a fifth of the rows), the hits are ranked word by word: one FTS5 query per word,
 * each score rescaled by Lucene's IDF over FTS5's, summed per row. Otherwise one FTS5 query for all
 * the words ranks them as it always did (its IDF then within ln 1.25 of Lucene's).
 */

/** FTS5's IDF ratio below which a word is ranked with Lucene's IDF, one query per word. */
const commonRatio = 4

const ratioOf = (rows: number, frequency: number) => (rows - frequency + 0.5) / (frequency + 0.5)

/** The IDF FTS5's `bm25()` gives a word held by `frequency` of `rows` rows. */
export const ftsIdf = (rows: number, frequency: number): number => {
  const idf = Math.log(ratioOf(rows, frequency))
  return idf <= 0 ? 1e-6 : idf
}

/** Lucene's IDF of a word held by `frequency` of `rows` rows: never negative, never floored. */
export const positiveIdf = (rows: number, frequency: number): number => Math.log1p(ratioOf(rows, frequency))

/**
 * The factor turning each word's FTS5 score into its Lucene-IDF score, or `null` when no word is
 * common enough for that to matter (one query ranks them all).
 */
export const idfRescaling = (rows: number, frequencies: ReadonlyArray<number>): ReadonlyArray<number> | null =>
  frequencies.some((frequency) => ratioOf(rows, frequency) < commonRatio)
    ? frequencies.map((frequency) => positiveIdf(rows, frequency) / ftsIdf(rows, frequency))
    : null

/**
 * One SQL statement ranking the rows of `select` (which names `rowid`, a tie-break `key` and a
 * BM25 `score`, and takes its MATCH expression as its first parameter) summed over one query per
 * word (two words or more), each weighted: parameters are, per word, its weight, its MATCH expression and `params`,
 * then the limit. Sums are rounded to 1e-9 so that identical rows tie exactly.
 */
export const perWordRanking = (select: string, words: number): string => {
  const branch = `SELECT rowid, key, score * ? AS score FROM (${select})`
  return `SELECT rowid, key, round(SUM(score), 9) AS score FROM (${Array.from({ length: words }, () => branch).join(" UNION ALL ")})
    GROUP BY rowid ORDER BY score, key LIMIT ?`
}

/**
 * The row count FTS5 keeps for a table (`N` of its BM25) in its averages record (the `_data` row
 * with id 1): a SQLite varint at the start of the blob.
 */
export const ftsRowCount = (averages: Uint8Array | null | undefined): number => {
  if (!averages) return 0
  let value = 0
  for (let i = 0; i < 9 && i < averages.length; i++) {
    const byte = averages[i]!
    if (i === 8) return value * 256 + byte
    value = value * 128 + (byte & 0x7f)
    if ((byte & 0x80) === 0) return value
  }
  return value
}
