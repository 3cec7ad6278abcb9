/**
 * The retrieval benchmark's metrics (bench/retrieval-metrics.ts) against values computed by hand,
 * and its reader of the SMART files the vendored collections were converted from
 * (bench/retrieval-smart.ts).
 */
import { describe, expect, it } from "vitest"
import { averagePrecisionAt, firstHitPerDocument, meanScores, ndcgAt, recallAt, scoreRanking } from "../../bench/retrieval-metrics.js"
import { paragraphs, parseSmart, smartDocuments, smartJudgments, smartQueries } from "../../bench/retrieval-smart.js"

const relevant = (...ids: Array<string>) => new Set(ids)

describe("nDCG@k", () => {
  it("discounts a relevant document at rank i by log2(i + 1) and divides by the ideal ranking's DCG", () => {
    // DCG@3 = 1/log2(2) + 0 + 1/log2(4) = 1.5; three relevant documents: IDCG@3 = 1 + 1/log2(3) + 1/2 = 2.130930
    expect(ndcgAt(["a", "b", "c", "d"], relevant("a", "c", "x"), 3)).toBeCloseTo(1.5 / 2.13093, 5)
    expect(ndcgAt(["a", "b", "c", "d"], relevant("a", "c", "x"), 3)).toBeCloseTo(0.703918, 5)
    // one relevant document at rank 2: (1/log2(3)) / 1
    expect(ndcgAt(["a", "b"], relevant("b"), 10)).toBeCloseTo(0.630930, 5)
  })

  it("builds the ideal from at most k relevant documents, so a perfect top k scores 1 however many more are relevant", () => {
    const ids = Array.from({ length: 12 }, (_, i) => `d${i}`)
    expect(ndcgAt(ids.slice(0, 10), relevant(...ids), 10)).toBe(1)
    // only ranks 1…k count: a relevant document at rank 11 adds nothing
    expect(ndcgAt(["x", "y", "z", "w", "v", "u", "t", "s", "r", "q", "d0"], relevant("d0"), 10)).toBe(0)
  })

  it("is 0 for an empty ranking or no relevant document", () => {
    expect(ndcgAt([], relevant("a"), 10)).toBe(0)
    expect(ndcgAt(["a"], relevant(), 10)).toBe(0)
  })
})

describe("MAP@k (average precision)", () => {
  it("averages the precision at each relevant rank over all relevant documents, found or not", () => {
    // relevant at ranks 1 (1/1) and 3 (2/3); three relevant in all: (1 + 2/3) / 3
    expect(averagePrecisionAt(["a", "b", "c", "d"], relevant("a", "c", "x"), 100)).toBeCloseTo(5 / 9, 10)
    // relevant at ranks 2 (1/2) and 4 (2/4); two relevant: (0.5 + 0.5) / 2
    expect(averagePrecisionAt(["x", "a", "y", "b"], relevant("a", "b"), 100)).toBe(0.5)
  })

  it("counts only the top k", () => {
    expect(averagePrecisionAt(["x", "a"], relevant("a"), 1)).toBe(0)
    expect(averagePrecisionAt(["x", "a"], relevant("a"), 2)).toBe(0.5)
  })

  it("is 0 without relevant documents", () => {
    expect(averagePrecisionAt(["a"], relevant(), 100)).toBe(0)
  })
})

describe("Recall@k", () => {
  it("is the share of relevant documents in the top k", () => {
    expect(recallAt(["a", "b", "c", "d"], relevant("a", "c", "x"), 2)).toBeCloseTo(1 / 3, 10)
    expect(recallAt(["a", "b", "c", "d"], relevant("a", "c", "x"), 3)).toBeCloseTo(2 / 3, 10)
    expect(recallAt(["a", "b", "c"], relevant("a", "c"), 10)).toBe(1)
    expect(recallAt(["a"], relevant(), 10)).toBe(0)
  })
})

describe("rankings", () => {
  it("refuse a document listed twice", () => {
    expect(() => ndcgAt(["a", "a"], relevant("a"), 10)).toThrow("each document once")
    expect(() => averagePrecisionAt(["a", "a"], relevant("a"), 10)).toThrow("each document once")
    expect(() => recallAt(["a", "a"], relevant("a"), 10)).toThrow("each document once")
  })

  it("keep a document's first hit, expand a hit that holds several documents, skip hits of none, stop at k", () => {
    const hits = [{ of: ["3"] }, { of: ["3"] }, { of: [] }, { of: ["1", "2"] }, { of: ["4"] }, { of: ["5"] }]
    expect(firstHitPerDocument(hits, (hit) => hit.of, 10)).toEqual(["3", "1", "2", "4", "5"])
    expect(firstHitPerDocument(hits, (hit) => hit.of, 2)).toEqual(["3", "1"])
  })
})

describe("meanScores", () => {
  it("averages over the queries with at least one judgment; a judged query with no ranking scores 0", () => {
    const judgments = new Map([
      ["q1", relevant("a")],
      ["q2", relevant("b", "c")],
      ["q3", relevant()]
    ])
    const rankings = new Map([
      ["q1", ["a"]],
      ["q3", ["z"]]
    ])
    // q1: nDCG 1, AP 1, recall 1; q2 (no ranking): 0, 0, 0; q3 is not judged
    expect(meanScores(rankings, judgments)).toEqual({ ndcg10: 0.5, map100: 0.5, recall10: 0.5, queries: 2 })
    expect(scoreRanking(["b", "x", "c"], relevant("b", "c"))).toEqual({
      ndcg10: (1 + 1 / 2) / (1 + 1 / Math.log2(3)),
      map100: (1 + 2 / 3) / 2,
      recall10: 1
    })
  })

  it("is all zeros with no judged query", () => {
    expect(meanScores(new Map(), new Map([["q", relevant()]]))).toEqual({ ndcg10: 0, map100: 0, recall10: 0, queries: 0 })
  })
})

describe("the SMART reader", () => {
  const all = [
    ".I 1",
    ".T",
    "18 Editions of the Dewey",
    "Decimal Classifications",
    ".A",
    "Comaromi, J.P.",
    ".W",
    "   The present study is a history",
    "of the DEWEY Decimal Classification.",
    "   A second paragraph .5 percent",
    ".5 percent is text, not a field.",
    ".X",
    "1\t5\t1",
    "92\t1\t1",
    ".I 2 ",
    ".T ",
    "Use Made of Technical Libraries",
    ".W ",
    "This report is an analysis.",
    ""
  ].join("\r\n")

  it("keeps the title and the text, never the authors or the .X cross-references", () => {
    expect(smartDocuments(all, true)).toEqual([
      {
        id: "1",
        title: "18 Editions of the Dewey Decimal Classifications",
        text: "The present study is a history of the DEWEY Decimal Classification.\n\nA second paragraph .5 percent .5 percent is text, not a field."
      },
      { id: "2", title: "Use Made of Technical Libraries", text: "This report is an analysis." }
    ])
    expect(smartDocuments(all, false).map((d) => d.title)).toEqual([null, null])
    expect(parseSmart(all)[0]!.fields.get("X")).toBe("1\t5\t1\n92\t1\t1")
  })

  it("reads queries by their .W text and refuses malformed files", () => {
    expect(smartQueries(".I 1\n.W\nWhat problems\nare there?\n.I 2\n.T\nA title\n.W\nSecond.\n")).toEqual([
      { id: "1", text: "What problems are there?" },
      { id: "2", text: "Second." }
    ])
    expect(() => parseSmart("stray text\n.I 1\n.W\nx\n")).toThrow("line 1: text outside a field")
    expect(() => parseSmart(".I 1\n.W\nx\n.I 1\n.W\ny\n")).toThrow("record .I 1 appears twice")
    expect(() => smartQueries(".I 1\n.T\nonly a title\n")).toThrow("query 1 has no .W text")
  })

  it("splits paragraphs at blank or indented lines", () => {
    expect(paragraphs("one\ntwo\n\nthree\n  four\nfive   ")).toBe("one two\n\nthree\n\nfour five")
  })

  it("reads CISI's and MEDLINE's judgment columns, each pair once", () => {
    expect(smartJudgments("     1     28\t0\t0.000000\r\n1 28 0 0.000000\n2 5 0 0.000000\n", 1)).toEqual([
      { queryId: "1", docId: "28" },
      { queryId: "2", docId: "5" }
    ])
    expect(smartJudgments("1 0 13 1\n1 0 14 1\n", 2)).toEqual([
      { queryId: "1", docId: "13" },
      { queryId: "1", docId: "14" }
    ])
    expect(() => smartJudgments("1 x\n", 1)).toThrow("line 1: not a judgment")
  })
})
