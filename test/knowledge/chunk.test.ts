/**
 * Chunking (server/knowledge/sources/chunk.ts): the properties every chunk list must have (exact slices,
 * order, coverage of every non-whitespace character, bounded size and overlap, no cut inside a
 * word unless the word is longer than the target, no split surrogate pairs or grapheme clusters,
 * section labels), checked on generated texts across many seeds and options; then the preferred
 * break kinds, long words, text without spaces, sections, determinism, option validation and the
 * extracted fixtures.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { type Chunk, chunkText, type ChunkableDocument, defaultOverlapChars, defaultTargetChars } from "../../server/knowledge/sources/chunk.js"
import { type DocumentType, extractText } from "../../server/knowledge/sources/extract.js"

const isSpace = (char: string | undefined): boolean => char !== undefined && /\s/.test(char)
const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" })

/** Positions between two grapheme clusters of `text` (0 and `text.length` included). */
const graphemeBoundaries = (text: string): Set<number> => {
  const boundaries = new Set<number>([text.length])
  for (const { index } of graphemes.segment(text)) boundaries.add(index)
  return boundaries
}

/** The whitespace-delimited token around position `at` (a position strictly inside it). */
const tokenAround = (text: string, at: number): string => {
  let start = at
  while (start > 0 && !isSpace(text[start - 1])) start--
  let end = at
  while (end < text.length && !isSpace(text[end])) end++
  return text.slice(start, end)
}

const spaceless = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u

/** The label a chunk starting at `start` must carry, computed the slow way. */
const expectedSection = (document: ChunkableDocument, start: number, end: number): string | null => {
  const holding = document.sections.filter((s) => s.start <= start && start < s.end)
  if (holding.length > 0) return holding.reduce((a, b) => (b.start >= a.start ? b : a)).label
  const overlapping = document.sections
    .filter((s) => s.end > s.start && s.start > start && s.start < end)
    .sort((a, b) => a.start - b.start)
  return overlapping[0]?.label ?? null
}

/** Every guarantee of chunkText's module comment, for one document and options. */
const checkChunks = (document: ChunkableDocument, chunks: ReadonlyArray<Chunk>, target: number, overlap: number): void => {
  const { text } = document
  const boundaries = graphemeBoundaries(text)
  if (text.trim() === "") {
    expect(chunks).toEqual([])
    return
  }
  expect(chunks.length).toBeGreaterThan(0)
  // Only whitespace before the first chunk and after the last.
  expect(text.slice(0, chunks[0]!.start).trim()).toBe("")
  expect(text.slice(chunks.at(-1)!.end).trim()).toBe("")
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i)
    expect(chunk.text).toBe(text.slice(chunk.start, chunk.end))
    expect(chunk.text.length).toBeGreaterThan(0)
    expect(chunk.text).toBe(chunk.text.trim())
    expect(boundaries.has(chunk.start), `chunk ${i} starts inside a grapheme`).toBe(true)
    expect(boundaries.has(chunk.end), `chunk ${i} ends inside a grapheme`).toBe(true)
    if (chunk.text.length > target) {
      // Only a single grapheme wider than the target may exceed it.
      expect([...graphemes.segment(chunk.text)]).toHaveLength(1)
    }
    // A cut inside a whitespace-delimited token only for a token longer than the target, or
    // between words of a script written without spaces.
    for (const position of [chunk.start, chunk.end]) {
      if (position > 0 && position < text.length && !isSpace(text[position - 1]) && !isSpace(text[position])) {
        const token = tokenAround(text, position)
        const allowed = token.length > target || spaceless.test(text[position - 1]!) || spaceless.test(text[position]!) || /[。！？]/.test(text[position - 1]!)
        expect(allowed, `chunk ${i} cuts "${token}" at ${position}`).toBe(true)
      }
    }
    expect(chunk.section).toBe(expectedSection(document, chunk.start, chunk.end))
    const previous = chunks[i - 1]
    if (previous !== undefined) {
      expect(chunk.start).toBeGreaterThan(previous.start)
      expect(chunk.end).toBeGreaterThan(previous.end)
      // Coverage: no gap but whitespace; overlap: never more than asked for.
      expect(text.slice(previous.end, Math.max(previous.end, chunk.start)).trim()).toBe("")
      expect(previous.end - chunk.start).toBeLessThanOrEqual(overlap)
    }
  })
}

/** A small deterministic PRNG (mulberry32). */
const random = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const vocabulary = [
  "the", "refund", "policy", "applies", "within", "days", "café", "naïve", "Zürich", "e\u0301te\u0301", "emoji",
  "🙂", "👩‍💻", "日本語", "テキスト", "data", "a", "of", "customers", "invoice", "𝒳-ray", "co-operate", "(see", "above)"
]

/** Prose: paragraphs of sentences of words, with some line breaks, extra spaces and, optionally, long words. */
const generateText = (seed: number, longWords: boolean): string => {
  const next = random(seed)
  const pick = <T,>(items: ReadonlyArray<T>): T => items[Math.floor(next() * items.length)]!
  const paragraphs: Array<string> = []
  const paragraphCount = 1 + Math.floor(next() * 12)
  for (let p = 0; p < paragraphCount; p++) {
    let paragraph = ""
    const sentenceCount = 1 + Math.floor(next() * 8)
    for (let s = 0; s < sentenceCount; s++) {
      const words: Array<string> = []
      const wordCount = 1 + Math.floor(next() * 25)
      for (let w = 0; w < wordCount; w++) {
        if (longWords && next() < 0.01) words.push("x".repeat(50 + Math.floor(next() * 600)))
        else words.push(pick(vocabulary))
      }
      paragraph += (s === 0 ? "" : pick([" ", " ", " ", "  ", "\n"])) + words.join(" ") + pick([".", "!", "?", ".)", "…"])
    }
    paragraphs.push(paragraph)
  }
  return pick(["", " ", "\n"]) + paragraphs.join(pick(["\n\n", "\n \n", "\n\n\n"])) + pick(["", "\n", "  "])
}

describe("chunkText: properties on generated texts", () => {
  const optionSets: Array<{ targetChars: number; overlapChars: number }> = [
    { targetChars: 1000, overlapChars: 150 },
    { targetChars: 200, overlapChars: 50 },
    { targetChars: 80, overlapChars: 0 },
    { targetChars: 60, overlapChars: 59 },
    { targetChars: 5, overlapChars: 2 }
  ]
  for (const options of optionSets) {
    const seeds = options.targetChars < 50 ? 12 : 60
    it(`target ${options.targetChars}, overlap ${options.overlapChars}: ${seeds} seeds`, () => {
      for (let seed = 1; seed <= seeds; seed++) {
        const text = generateText(seed, seed % 3 === 0)
        // Sections at every paragraph, like pages.
        const sections: Array<{ label: string; start: number; end: number }> = []
        const paragraph = /\S(?:[^\n]|\n(?!\s*\n))*/g
        for (const match of text.matchAll(paragraph)) {
          sections.push({ label: `page ${sections.length + 1}`, start: match.index, end: match.index + match[0].trimEnd().length })
        }
        for (const document of [{ text, sections: [] }, { text, sections }]) {
          const chunks = chunkText(document, options)
          checkChunks(document, chunks, options.targetChars, options.overlapChars)
        }
      }
    })
  }

  it("prose with short words: every chunk but the last fills at least half the target, and chunks overlap", () => {
    for (let seed = 100; seed < 130; seed++) {
      const text = generateText(seed, false)
      const chunks = chunkText({ text, sections: [] }, { targetChars: 300, overlapChars: 60 })
      checkChunks({ text, sections: [] }, chunks, 300, 60)
      const longestWord = Math.max(...text.split(/\s+/).map((w) => w.length))
      chunks.slice(0, -1).forEach((chunk, i) => {
        expect(chunk.text.length).toBeGreaterThanOrEqual(150)
        // The next chunk starts at the first word start in the last 60 characters.
        const shared = chunk.end - chunks[i + 1]!.start
        expect(shared).toBeGreaterThan(60 - longestWord - 2)
      })
    }
  })
})

describe("chunkText: where chunks end", () => {
  const sentence = (n: number): string => `Sentence number ${n} says something short.`

  it("gives no chunks for empty or whitespace-only text", () => {
    expect(chunkText({ text: "", sections: [] })).toEqual([])
    expect(chunkText({ text: " \n\t\n  \u00a0", sections: [] })).toEqual([])
  })

  it("gives one trimmed chunk for a short text", () => {
    expect(chunkText({ text: "\n  Hello, world.  \n", sections: [] })).toEqual([
      { index: 0, text: "Hello, world.", start: 3, end: 16, section: null }
    ])
  })

  it("uses the defaults (1000 and 150)", () => {
    expect([defaultTargetChars, defaultOverlapChars]).toEqual([1000, 150])
    const text = Array.from({ length: 200 }, (_, i) => sentence(i)).join(" ")
    const chunks = chunkText({ text, sections: [] })
    checkChunks({ text, sections: [] }, chunks, 1000, 150)
    for (const chunk of chunks.slice(0, -1)) expect(chunk.text.length).toBeGreaterThan(900)
  })

  it("prefers a paragraph break over a later sentence end", () => {
    const first = Array.from({ length: 14 }, (_, i) => sentence(i)).join(" ") // ~ 600 characters
    const second = Array.from({ length: 14 }, (_, i) => sentence(100 + i)).join(" ")
    const text = `${first}\n\n${second}`
    const [chunk] = chunkText({ text, sections: [] }, { targetChars: 1000, overlapChars: 0 })
    expect(chunk!.text).toBe(first)
  })

  it("prefers a sentence end over a later word boundary, and a line break over a sentence end", () => {
    const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau"
    const text = `${words}. ${words} ${words}`
    const [chunk] = chunkText({ text, sections: [] }, { targetChars: 150, overlapChars: 0 })
    expect(chunk!.text).toBe(`${words}.`)
    const lines = `${words} one\n${words}. two more words here and there`
    const [lineChunk] = chunkText({ text: lines, sections: [] }, { targetChars: 180, overlapChars: 0 })
    expect(lineChunk!.text).toBe(`${words} one`)
  })

  it("counts a sentence end before closing quotes and brackets, and after CJK marks without spaces", () => {
    const filler = "word ".repeat(12)
    const quoted = `${filler}he said "stop." ${filler}${filler}`
    expect(chunkText({ text: quoted, sections: [] }, { targetChars: 100, overlapChars: 0 })[0]!.text).toBe(
      `${filler}he said "stop."`
    )
    const japanese = "日本語のテキストを検索できるように分割します。これは二番目の文です。そして三番目の文がここにあります。"
    const chunks = chunkText({ text: japanese, sections: [] }, { targetChars: 40, overlapChars: 0 })
    expect(chunks.map((c) => c.text)).toEqual([
      "日本語のテキストを検索できるように分割します。これは二番目の文です。",
      "そして三番目の文がここにあります。"
    ])
  })

  it("keeps CSV-like lines whole", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `id: ${i + 1}; name: Customer ${i + 1}; city: Somewhere; plan: Pro`)
    const text = lines.join("\n")
    const chunks = chunkText({ text, sections: [] }, { targetChars: 500, overlapChars: 0 })
    for (const chunk of chunks) {
      for (const line of chunk.text.split("\n")) expect(lines).toContain(line)
    }
    expect(chunks.map((c) => c.text).join("\n")).toBe(text)
  })

  it("splits a very long single line at word boundaries near the target", () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `w${i % 97}`).join(" ")
    const chunks = chunkText({ text, sections: [] }, { targetChars: 1000, overlapChars: 100 })
    checkChunks({ text, sections: [] }, chunks, 1000, 100)
    for (const chunk of chunks.slice(0, -1)) expect(chunk.text.length).toBeGreaterThan(990)
  })

  it("does not cut a word that fits the target: it moves to the next chunk", () => {
    const first = "a".repeat(50)
    const word = "b".repeat(90)
    const chunks = chunkText({ text: `${first} ${word} ccc`, sections: [] }, { targetChars: 100, overlapChars: 10 })
    expect(chunks.map((c) => c.text)).toEqual([first, `${word} ccc`])
  })

  it("cuts a word longer than the target into target-sized pieces without overlap", () => {
    const word = "x".repeat(2500)
    const chunks = chunkText({ text: `start ${word} end`, sections: [] }, { targetChars: 1000, overlapChars: 150 })
    expect(chunks.map((c) => [c.start, c.end])).toEqual([
      [0, 5],
      [6, 1006],
      [1006, 2006],
      [2006, 2510]
    ])
    expect(chunks.at(-1)!.text).toBe(`${"x".repeat(500)} end`)
  })

  it("cuts a long URL at a word boundary inside it rather than anywhere", () => {
    const url = `https://example.com/${Array.from({ length: 40 }, (_, i) => `segment${i}`).join("/")}`
    const chunks = chunkText({ text: url, sections: [] }, { targetChars: 100, overlapChars: 0 })
    checkChunks({ text: url, sections: [] }, chunks, 100, 0)
    for (const chunk of chunks.slice(0, -1)) expect(url[chunk.end - 1]).toMatch(/[/\d]/)
    expect(chunks.map((c) => c.text).join("")).toBe(url)
  })

  it("never splits surrogate pairs, emoji sequences or combining accents", () => {
    const cases = ["😀".repeat(600), "👩‍💻".repeat(300), "e\u0301".repeat(700), "𝒳".repeat(333)]
    for (const text of cases) {
      for (const targetChars of [7, 10, 101]) {
        const chunks = chunkText({ text, sections: [] }, { targetChars, overlapChars: 3 })
        checkChunks({ text, sections: [] }, chunks, targetChars, 3)
        expect(chunks.map((c) => c.text).join("")).toBe(text)
      }
    }
  })

  it("lets a single grapheme wider than a tiny target be a chunk of its own", () => {
    const family = "👨‍👩‍👧‍👦" // 11 UTF-16 code units
    const chunks = chunkText({ text: `${family}${family}`, sections: [] }, { targetChars: 4, overlapChars: 0 })
    expect(chunks.map((c) => c.text)).toEqual([family, family])
  })

  it("cuts text without spaces between words, and overlaps on word boundaries there", () => {
    const text = "日本語のテキストを検索できるように分割します".repeat(10)
    const chunks = chunkText({ text, sections: [] }, { targetChars: 30, overlapChars: 8 })
    checkChunks({ text, sections: [] }, chunks, 30, 8)
    const words = new Set<number>([text.length])
    for (const { index } of new Intl.Segmenter("en", { granularity: "word" }).segment(text)) words.add(index)
    for (const chunk of chunks) {
      expect(words.has(chunk.start)).toBe(true)
      expect(words.has(chunk.end)).toBe(true)
    }
    expect(chunks.slice(1).some((c, i) => c.start < chunks[i]!.end)).toBe(true)
  })
})

describe("chunkText: overlap", () => {
  it("starts the next chunk at the first word start in the last overlapChars characters", () => {
    const text = "one two three four five six seven eight nine ten eleven twelve"
    const chunks = chunkText({ text, sections: [] }, { targetChars: 30, overlapChars: 12 })
    expect(chunks.map((c) => c.text)).toEqual([
      "one two three four five six",
      "five six seven eight nine ten",
      "nine ten eleven twelve"
    ])
  })

  it("drops the overlap when keeping it would leave no room to get past the previous chunk", () => {
    // From "bbb" (the overlap start) the 27 c's do not fit in 30 characters; from their own start they do.
    const text = `aaa bbb ${"c".repeat(27)} ddd`
    const chunks = chunkText({ text, sections: [] }, { targetChars: 30, overlapChars: 10 })
    expect(chunks.map((c) => c.text)).toEqual(["aaa bbb", "c".repeat(27), "ddd"])
  })

  it("does not reach back into the previous section", () => {
    const text = "alpha beta gamma delta\n\nepsilon zeta eta theta iota kappa"
    const sections = [
      { label: "page 1", start: 0, end: 22 },
      { label: "page 2", start: 24, end: text.length }
    ]
    const chunks = chunkText({ text, sections }, { targetChars: 40, overlapChars: 25 })
    expect(chunks.map((c) => [c.text, c.section])).toEqual([
      ["alpha beta gamma delta", "page 1"],
      ["epsilon zeta eta theta iota kappa", "page 2"]
    ])
    // Without sections, the same text overlaps across the paragraph break.
    const plain = chunkText({ text, sections: [] }, { targetChars: 40, overlapChars: 25 })
    expect(plain[1]!.start).toBeLessThan(22)
    // A chunk ending inside page 2 is followed by one starting no earlier than page 2's start.
    const later = chunkText({ text, sections }, { targetChars: 35, overlapChars: 30 })
    expect(later.map((c) => [c.text, c.section])).toEqual([
      ["alpha beta gamma delta", "page 1"],
      ["epsilon zeta eta theta iota kappa", "page 2"]
    ])
    const mid = chunkText({ text: `${text} lambda mu`, sections: [sections[0]!, { label: "page 2", start: 24, end: text.length + 10 }] }, { targetChars: 45, overlapChars: 44 })
    // Even when the rest of the text would fit in one window, a chunk never runs into the next section.
    expect(mid.map((c) => [c.text, c.section])).toEqual([
      ["alpha beta gamma delta", "page 1"],
      ["epsilon zeta eta theta iota kappa lambda mu", "page 2"]
    ])
  })

  it("with overlap 0 the chunks tile the text", () => {
    const text = generateText(7, false)
    const chunks = chunkText({ text, sections: [] }, { targetChars: 120, overlapChars: 0 })
    for (let i = 1; i < chunks.length; i++) {
      expect(chunks[i]!.start).toBeGreaterThanOrEqual(chunks[i - 1]!.end)
      expect(text.slice(chunks[i - 1]!.end, chunks[i]!.start).trim()).toBe("")
    }
  })
})

describe("chunkText: sections", () => {
  const pages = ["First page text. ".repeat(10).trim(), "Second page text. ".repeat(10).trim(), "Third page text. ".repeat(10).trim()]
  const text = pages.join("\n\n")
  const sections = pages.map((page, i) => {
    const start = pages.slice(0, i).reduce((n, p) => n + p.length + 2, 0)
    return { label: `page ${i + 1}`, start, end: start + page.length }
  })

  it("labels each chunk with the section it starts in", () => {
    const chunks = chunkText({ text, sections }, { targetChars: 100, overlapChars: 30 })
    checkChunks({ text, sections }, chunks, 100, 30)
    expect(chunks[0]!.section).toBe("page 1")
    expect(chunks.at(-1)!.section).toBe("page 3")
    for (const chunk of chunks) {
      const label = chunk.text.startsWith("First") || chunk.text.startsWith("page text. First") ? "page 1" : undefined
      if (label !== undefined) expect(chunk.section).toBe(label)
      if (chunk.text.startsWith("Second")) expect(chunk.section).toBe("page 2")
      if (chunk.text.startsWith("Third")) expect(chunk.section).toBe("page 3")
    }
    // No chunk runs across a section boundary, so every citation names the right page.
    for (const chunk of chunks) {
      expect(sections.some((section) => chunk.start < section.start && section.start < chunk.end)).toBe(false)
    }
  })

  it("gives text outside every section its own chunk labelled null, and null without sections", () => {
    const preamble = "Preamble before any page."
    const document = { text: `${preamble}\n\n${text}`, sections: sections.map((s) => ({ ...s, start: s.start + preamble.length + 2, end: s.end + preamble.length + 2 })) }
    const chunks = chunkText(document, { targetChars: 1000, overlapChars: 0 })
    expect(chunks.map((c) => c.section)).toEqual([null, "page 1", "page 2", "page 3"])
    expect(chunks[0]!.text).toBe(preamble)
    expect(chunkText({ text: preamble, sections: [] })[0]!.section).toBeNull()
    expect(chunkText({ text: preamble, sections: [{ label: "page 9", start: 100, end: 120 }] })[0]!.section).toBeNull()
  })

  it("does not depend on the order sections are given in, and ignores empty ones", () => {
    const shuffled = [sections[2]!, { label: "empty", start: 0, end: 0 }, sections[0]!, sections[1]!]
    const options = { targetChars: 100, overlapChars: 30 }
    expect(chunkText({ text, sections: shuffled }, options)).toEqual(chunkText({ text, sections }, options))
  })
})

describe("chunkText: determinism and options", () => {
  it("gives the same chunks every time", () => {
    const text = generateText(42, true)
    const first = chunkText({ text, sections: [] }, { targetChars: 250, overlapChars: 40 })
    for (let i = 0; i < 3; i++) expect(chunkText({ text, sections: [] }, { targetChars: 250, overlapChars: 40 })).toEqual(first)
  })

  it("refuses invalid options with a RangeError", () => {
    const document = { text: "some text", sections: [] }
    const invalid: Array<{ targetChars?: number; overlapChars?: number }> = [
      { targetChars: 0 },
      { targetChars: -5 },
      { targetChars: 10.5 },
      { targetChars: Number.NaN },
      { targetChars: 100, overlapChars: 100 },
      { targetChars: 100, overlapChars: -1 },
      { targetChars: 100, overlapChars: 1.5 },
      { targetChars: 100 } // the default overlap (150) is not below 100
    ]
    for (const options of invalid) expect(() => chunkText(document, options)).toThrow(RangeError)
    expect(chunkText(document, { targetChars: 1, overlapChars: 0 }).map((c) => c.text)).toEqual(["s", "o", "m", "e", "t", "e", "x", "t"])
  })
})

describe("chunkText on extracted fixtures", () => {
  const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`../../fixtures/${name}`, import.meta.url)))
  const cases: Array<[string, DocumentType]> = [
    ["handbook.pdf", "pdf"],
    ["customers.csv", "csv"],
    ["notes.txt", "txt"],
    ["guide.md", "md"],
    ["page.html", "html"]
  ]
  for (const [name, type] of cases) {
    it(`${name}: every guarantee holds with the defaults and with small chunks`, async () => {
      const document = await extractText({ bytes: fixture(name), type })
      for (const [targetChars, overlapChars] of [
        [1000, 150],
        [200, 40]
      ] as const) {
        checkChunks(document, chunkText(document, { targetChars, overlapChars }), targetChars, overlapChars)
      }
    })
  }

  it("handbook.pdf in 200-character chunks cites pages", async () => {
    const document = await extractText({ bytes: fixture("handbook.pdf"), type: "pdf" })
    const chunks = chunkText(document, { targetChars: 200, overlapChars: 40 })
    expect(chunks[0]!.section).toBe("page 1")
    // Chunks start at a page's start rather than overlap back into the previous page.
    expect(chunks.find((c) => c.text.includes("Submit every expense claim"))!.text.startsWith("Expenses\n\nSubmit")).toBe(true)
    expect(chunks.find((c) => c.text.includes("Submit every expense claim"))!.section).toBe("page 2")
    expect(chunks.at(-1)!.section).toBe("page 3")
    expect(new Set(chunks.map((c) => c.section))).toEqual(new Set(["page 1", "page 2", "page 3"]))
  })

  it("customers.csv with the defaults cites row blocks and keeps rows whole where it can", async () => {
    const document = await extractText({ bytes: fixture("customers.csv"), type: "csv" })
    const chunks = chunkText(document)
    expect(chunks[0]!.section).toBe("rows 1–20")
    expect(chunks.at(-1)!.section).toBe("rows 21–30")
    for (const chunk of chunks) expect(document.text[chunk.end] ?? "\n").toBe("\n")
    expect(chunks.find((c) => c.text.includes("Yukihiro Matsumoto"))!.section).toBe("rows 21–30")
  })
})
