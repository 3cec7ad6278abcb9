/**
 * The analyzer's two ways of counting a candidate's query words (server/knowledge/search/analyzer.ts):
 * every word read and stemmed, or, in ASCII text, only the words a stem's prefix starts. Both must
 * count the same, on public text (the CISI collection) and on words Porter rewrites most; and so
 * must the snippets' matcher find and mark the same words.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { stemCounts, stemMatcher, stemOf, wordPattern } from "../../server/knowledge/search/analyzer.js"

const cisi = gunzipSync(readFileSync(join(import.meta.dirname, "../../fixtures/retrieval/cisi/docs.jsonl.gz")))
  .toString("utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { title: string; text: string })

/** The reference: every word counted, then only `only`'s stems kept. */
const reference = (text: string, only: ReadonlySet<string>) => new Map([...stemCounts(text)].filter(([stem]) => only.has(stem)))
const sorted = (counts: ReadonlyMap<string, number>) => [...counts].sort(([a], [b]) => (a < b ? -1 : 1))

describe("stemCounts for a few stems", () => {
  it("counts as reading every word would, on every CISI document, for its own words and another document's", () => {
    let compared = 0
    for (let i = 0; i < cisi.length; i++) {
      const text = `${cisi[i]!.title}\n${cisi[i]!.text}`
      const own = [...stemCounts(text).keys()]
      const other = [...stemCounts(cisi[(i * 7 + 3) % cisi.length]!.text).keys()]
      const only = new Set([...own.filter((_, j) => j % 5 === i % 5), ...other.slice(0, 12)])
      expect(sorted(stemCounts(text, only))).toEqual(sorted(reference(text, only)))
      // One or two stems are looked for one by one, more by one expression: both ways.
      const few = new Set([own[i % own.length]!, other[0]!])
      expect(sorted(stemCounts(text, few))).toEqual(sorted(reference(text, few)))
      compared += only.size + few.size
    }
    expect(compared).toBeGreaterThan(20_000)
  })

  it("finds words whose stems rewrite their last letters, in any case, and nothing inside other words", () => {
    const text = "Sensibility, SENSIBILITIES; relational agreeably happy HAPPINESS organization digitized hoping hopes unhappy x-happy 2happy snake_happy"
    const only = new Set(["sensibl", "relat", "agreeabl", "happi", "organ", "digit", "hope"].map((word) => stemOf(word)))
    for (const word of ["sensibility", "relational", "agreeably", "happy", "organization", "digitized", "hoping"]) only.add(stemOf(word))
    const counts = stemCounts(text, only)
    expect(sorted(counts)).toEqual(sorted(reference(text, only)))
    expect(counts.get(stemOf("happy"))).toBe(4)
    expect(stemCounts(text, new Set([stemOf("happy")])).get(stemOf("happy"))).toBe(4)
    expect(counts.get(stemOf("sensibility"))).toBe(2)
  })

  it("reads text with accents or other scripts word by word, as the index does", () => {
    const text = "Café and cafe, naïve and NAIVE, 東京 and Zürich"
    const only = new Set([stemOf("cafe"), stemOf("naive"), stemOf("zurich"), stemOf("東京")])
    const counts = stemCounts(text, only)
    expect(counts.get(stemOf("cafe"))).toBe(2)
    expect(counts.get(stemOf("naive"))).toBe(2)
    expect(counts.get(stemOf("zurich"))).toBe(1)
    expect(counts.get(stemOf("東京"))).toBe(1)
  })
})

describe("stemMatcher", () => {
  /** The reference: every word read and stemmed. */
  const firstOf = (text: string, stems: ReadonlySet<string>) => {
    for (const match of text.matchAll(wordPattern)) if (stems.has(stemOf(match[0]))) return match.index
    return -1
  }
  const markOf = (text: string, stems: ReadonlySet<string>) => text.replace(wordPattern, (word) => (stems.has(stemOf(word)) ? `[${word}]` : word))

  it("finds and marks what reading every word would, on every CISI document, for one, two and many stems", () => {
    let found = 0
    for (let i = 0; i < cisi.length; i++) {
      const text = `${cisi[i]!.title}\n${cisi[i]!.text}`
      const own = [...stemCounts(text).keys()]
      const other = [...stemCounts(cisi[(i * 7 + 3) % cisi.length]!.text).keys()]
      for (const stems of [new Set([own[(i * 3) % own.length]!]), new Set([own.at(-1)!, other[0]!]), new Set([...own.filter((_, j) => j % 9 === i % 9), ...other.slice(0, 6)])]) {
        const matcher = stemMatcher(stems)
        const first = matcher.first(text)
        expect(first).toBe(firstOf(text, stems))
        expect(matcher.mark(text, (word) => `[${word}]`)).toBe(markOf(text, stems))
        if (first >= 0) found++
      }
    }
    expect(found).toBeGreaterThan(2_000)
  })

  it("matches words Porter rewrites, in any case, text with accents word by word, and nothing when no stem is asked", () => {
    const text = "An UNHAPPY x-Happiness, 2happy; Café naïve HAPPY organization"
    const stems = new Set([stemOf("happy"), stemOf("cafe"), stemOf("organizations")])
    const matcher = stemMatcher(stems)
    expect(matcher.first(text)).toBe(firstOf(text, stems))
    expect(matcher.mark(text, (word) => `[${word}]`)).toBe("An UNHAPPY x-[Happiness], 2happy; [Café] naïve [HAPPY] [organization]")
    const ascii = "unhappy, HAPPINESS and organizations"
    expect(matcher.first(ascii)).toBe(ascii.indexOf("HAPPINESS"))
    expect(stemMatcher(new Set()).first(ascii)).toBe(-1)
    expect(stemMatcher(new Set()).mark(ascii, () => "x")).toBe(ascii)
  })
})
