/**
 * The second stage of search (server/knowledge/search/bm25f.ts) against figures computed by hand:
 * BM25F over a title and a length-normalized body, Lucene's IDF, stop words left out, and RM3's
 * expansion words and interpolation.
 */
import { describe, expect, it } from "vitest"
import { analyze, b, expandedQuery, expansionTerms, idf, k1, score, titleWeight, type Statistics } from "../../server/knowledge/search/bm25f.js"

const statistics = (average: number): Statistics => ({ units: 10, averageLength: () => average })

describe("BM25F", () => {
  it("scores a body word as BM25 with Lucene's IDF", () => {
    // "receipt" twice in a body of 8 words, average 4: norm = 1 - b + b * 8 / 4 = 1.75.
    const analyzed = analyze({ kind: "document", title: "", body: "receipt one two three receipt four five six" })
    const norm = 1 - b + (b * 8) / 4
    const frequency = 2 / norm
    const expected = idf(10, 3) * ((frequency * (k1 + 1)) / (frequency + k1))
    expect(score(analyzed, "document", [{ stem: "receipt", weight: 1, idf: idf(10, 3) }], statistics(4))).toBeCloseTo(expected, 12)
    expect(idf(10, 3)).toBeCloseTo(Math.log(1 + 7.5 / 3.5), 12)
  })

  it("counts a title word titleWeight times, without length normalization, in the same saturation as the body", () => {
    const withTitle = analyze({ kind: "document", title: "Warranty", body: "The chair has a warranty of two years" })
    const bodyOnly = analyze({ kind: "document", title: "Chairs", body: "The chair has a warranty of two years" })
    const query = [{ stem: "warranti", weight: 1, idf: 1 }]
    const norm = 1 - b + (b * 8) / 8
    const combined = titleWeight + 1 / norm
    expect(score(withTitle, "document", query, statistics(8))).toBeCloseTo((combined * (k1 + 1)) / (combined + k1), 12)
    expect(score(bodyOnly, "document", query, statistics(8))).toBeCloseTo((1 * (k1 + 1)) / (1 + k1), 12)
  })

  it("never counts a stop word", () => {
    const analyzed = analyze({ kind: "page", title: "To the duty manager", body: "Report it to the manager" })
    expect(analyzed.title.has("to")).toBe(false)
    expect(analyzed.body.has("the")).toBe(false)
    expect(score(analyzed, "page", [{ stem: "to", weight: 1, idf: 5 }], statistics(5))).toBe(0)
    expect(score(analyzed, "page", [{ stem: "manag", weight: 1, idf: 1 }], statistics(5))).toBeGreaterThan(0)
  })
})

describe("RM3 feedback", () => {
  it("takes the strongest words of the best candidates, weighted by their share of the scores, leaving out query words and numbers", () => {
    const first = analyze({ kind: "document", title: "", body: "refund refund window 30" })
    const second = analyze({ kind: "document", title: "", body: "refund policy" })
    const terms = expansionTerms(
      [
        { analyzed: first, score: 3 },
        { analyzed: second, score: 1 }
      ],
      new Set(["refund"])
    )
    // window: 1/4 of the first (3/4 of the scores) = 0.1875; policy: 1/2 of the second (1/4) = 0.125.
    expect(terms.map((term) => term.stem)).toEqual(["window", "polici"])
    expect(terms[0]!.weight).toBeCloseTo(0.1875 / 0.3125, 12)
    expect(terms[1]!.weight).toBeCloseTo(0.125 / 0.3125, 12)
  })

  it("interpolates: the original words keep the original share, the expansion words the rest", () => {
    const query = expandedQuery(
      [
        { stem: "refund", weight: 1, idf: 2 },
        { stem: "day", weight: 1, idf: 1 }
      ],
      [{ stem: "window", weight: 1 }],
      () => 3
    )
    expect(query.map((term) => [term.stem, term.weight, term.idf])).toEqual([
      ["refund", 0.4, 2],
      ["day", 0.4, 1],
      ["window", expect.closeTo(0.2, 12), 3]
    ])
  })
})
