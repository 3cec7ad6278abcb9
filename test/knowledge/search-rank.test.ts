/**
 * The scoring helpers of search (server/knowledge/search/rank.ts), checked against a real FTS5
 * table: the row count read from FTS5's averages record, and word-by-word ranking that gives
 * exactly BM25 with Lucene's positive IDF where FTS5's own would be floored.
 */
import Database from "better-sqlite3"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ftsIdf, ftsRowCount, idfRescaling, perWordRanking, positiveIdf } from "../../server/knowledge/search/rank.js"

let db: Database.Database
const rows = [
  "the receipt for lunch",
  "keep every receipt and every expense claim",
  "an expense report without a receipt",
  "the train ticket",
  "a hotel night",
  "receipt receipt receipt"
]
const averages = () => (db.prepare("SELECT block FROM docs_data WHERE id = 1").get() as { block: Uint8Array }).block

beforeAll(() => {
  db = new Database(":memory:")
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='porter unicode61')")
  const insert = db.prepare("INSERT INTO docs (rowid, text) VALUES (?, ?)")
  rows.forEach((text, i) => insert.run(i + 1, text))
})
afterAll(() => db.close())

/** BM25 (k1 1.2, b 0.75, FTS5's document lengths) with Lucene's IDF, computed by hand. */
const expected = (words: ReadonlyArray<string>) => {
  const tokens = rows.map((text) => text.split(" "))
  const average = tokens.reduce((sum, t) => sum + t.length, 0) / tokens.length
  return tokens.map((doc) =>
    words.reduce((score, word) => {
      const frequency = doc.filter((token) => token === word).length
      if (frequency === 0) return score
      const held = tokens.filter((t) => t.includes(word)).length
      const saturation = (frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * doc.length) / average))
      return score + positiveIdf(tokens.length, held) * saturation
    }, 0)
  )
}

describe("ftsRowCount", () => {
  it("reads N from FTS5's averages record, one byte or several", () => {
    expect(ftsRowCount(averages())).toBe(rows.length)
    const big = new Database(":memory:")
    big.exec("CREATE VIRTUAL TABLE t USING fts5(text)")
    const insert = big.prepare("INSERT INTO t (text) VALUES (?)")
    big.transaction(() => {
      for (let i = 0; i < 20_000; i++) insert.run(`row ${i}`)
    })()
    expect(ftsRowCount((big.prepare("SELECT block FROM t_data WHERE id = 1").get() as { block: Uint8Array }).block)).toBe(20_000)
    big.close()
    expect(ftsRowCount(undefined)).toBe(0)
  })
})

describe("idfRescaling", () => {
  it("keeps FTS5's ranking for rare words and rescales when a word is common", () => {
    expect(idfRescaling(100_000, [10, 200])).toBeNull()
    expect(idfRescaling(6, [4, 1])).toEqual([positiveIdf(6, 4) / ftsIdf(6, 4), positiveIdf(6, 1) / ftsIdf(6, 1)])
    expect(ftsIdf(6, 4)).toBe(1e-6)
    expect(positiveIdf(6, 4)).toBeGreaterThan(0)
  })
})

describe("perWordRanking", () => {
  it("scores every row as BM25 with Lucene's IDF, best first, even for words in most rows", () => {
    const words = ["receipt", "expense"]
    const held = words.map((word) => (db.prepare("SELECT count(*) AS n FROM docs WHERE docs MATCH ?").get(`"${word}"`) as { n: number }).n)
    const weights = idfRescaling(ftsRowCount(averages()), held)!
    expect(weights).not.toBeNull()
    const select = "SELECT rowid, rowid AS key, bm25(docs) AS score FROM docs WHERE docs MATCH ?"
    const found = db
      .prepare(perWordRanking(select, words.length))
      .all(...words.flatMap((word, i) => [weights[i], `"${word}"`]), 10) as Array<{ rowid: number; score: number }>
    const byHand = expected(words)
    const ranked = byHand.map((score, i) => ({ rowid: i + 1, score })).filter((row) => row.score > 0).sort((a, b) => b.score - a.score)
    expect(found.map((row) => row.rowid)).toEqual(ranked.map((row) => row.rowid))
    found.forEach((row, i) => expect(-row.score).toBeCloseTo(ranked[i]!.score, 6))
    for (const row of found) expect(-row.score).toBeGreaterThan(0)
  })
})
