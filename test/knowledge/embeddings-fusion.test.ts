/** Reciprocal rank fusion: the formula, ties, duplicates, empty rankings and a bad `k`. */
import { describe, expect, it } from "vitest"
import { fusedOrder, reciprocalRankFusion } from "../../server/knowledge/embeddings/fusion.js"

describe("reciprocalRankFusion", () => {
  it("adds 1 / (k + rank) from every ranking that holds an id", () => {
    const scores = reciprocalRankFusion([
      ["a", "b", "c"],
      ["c", "a"]
    ])
    expect([...scores.keys()]).toEqual(["a", "b", "c"])
    expect(scores.get("a")).toBeCloseTo(1 / 61 + 1 / 62, 12)
    expect(scores.get("b")).toBeCloseTo(1 / 62, 12)
    expect(scores.get("c")).toBeCloseTo(1 / 63 + 1 / 61, 12)
    expect(fusedOrder(scores)).toEqual(["a", "c", "b"])
  })

  it("puts an id found by both rankings above ids at the top of one only", () => {
    const lexical = ["stopword-hit", "topical"]
    const vector = ["synonym-hit", "topical"]
    expect(fusedOrder(reciprocalRankFusion([lexical, vector]))).toEqual(["topical", "stopword-hit", "synonym-hit"])
  })

  it("uses the k given: a small k favours the top of each ranking", () => {
    const scores = reciprocalRankFusion([["x", "y"], ["y"]], 0)
    expect(scores.get("x")).toBe(1)
    expect(scores.get("y")).toBe(1 / 2 + 1)
  })

  it("counts an id repeated in one ranking at its best rank only", () => {
    expect(reciprocalRankFusion([["a", "a", "b"]]).get("a")).toBeCloseTo(1 / 61, 12)
    expect(reciprocalRankFusion([["a", "a", "b"]]).get("b")).toBeCloseTo(1 / 63, 12)
  })

  it("answers an empty map for no rankings or empty ones, and keeps first-seen order on ties", () => {
    expect(reciprocalRankFusion([]).size).toBe(0)
    expect(reciprocalRankFusion([[], []]).size).toBe(0)
    expect(fusedOrder(reciprocalRankFusion([["p"], ["q"]]))).toEqual(["p", "q"])
  })

  it("refuses a negative or non-finite k", () => {
    expect(() => reciprocalRankFusion([["a"]], -1)).toThrow(RangeError)
    expect(() => reciprocalRankFusion([["a"]], Number.NaN)).toThrow(RangeError)
    expect(() => reciprocalRankFusion([["a"]], Number.POSITIVE_INFINITY)).toThrow(RangeError)
  })
})
