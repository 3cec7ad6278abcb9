/**
 * Chunking of extracted documents for the search index: the second step of the ingestion
 * pipeline, after {@link ./extract.ts} and before the FTS5 index. {@link chunkText} cuts a
 * document's text into overlapping pieces of about `targetChars` characters; each piece knows its
 * exact character range in the text and the section (`page 3`, `rows 21–40`) it starts in, so a
 * search hit can quote the text and cite where it came from.
 *
 * How a chunk's end is chosen. From the chunk's start, the window is the next `targetChars`
 * characters. If the rest of the text fits, it is the last chunk. Otherwise the chunk ends at a
 * break inside the window, chosen by kind, strongest first:
 *
 * 1. a section boundary (whitespace where a section, such as a PDF page, ends or starts),
 * 2. a paragraph break (whitespace holding two or more line breaks),
 * 3. a line break,
 * 4. a sentence end (`.` `!` `?` `…` and CJK `。` `！` `？`, possibly followed by closing quotes or
 *    brackets, then whitespace; after CJK marks no whitespace is needed),
 * 5. any other whitespace (a word boundary).
 *
 * The strongest kind found in the second half of the window wins, the latest one of that kind; if
 * the second half has no break at all, the latest break in the first half is used. Only when the
 * window holds no break at all (a run of text without whitespace longer than `targetChars`) is the
 * run cut: at the latest word boundary `Intl.Segmenter` finds (so CJK, Thai and similar text without
 * spaces is cut between words), else between two grapheme clusters (so an emoji, a letter and its
 * accents or a surrogate pair are never split).
 *
 * Overlap. The next chunk starts at the earliest word start (the end of a whitespace run, or a
 * word boundary in text written without spaces) within the last `overlapChars` characters of the
 * previous chunk, so consecutive chunks share up to `overlapChars` characters of whole words. The
 * overlap never reaches back into an earlier section than the one the next chunk would start in
 * without overlap: if that section starts within those characters, the next chunk starts with it,
 * and a chunk that ends where its section ends is followed by one starting at the next section,
 * without overlap (so each chunk is cited with the section it mostly belongs to). When no word
 * starts there (the chunk ended with one long word) or starting there would leave no room to reach
 * past the previous chunk, the next chunk starts right after the previous one.
 *
 * Guarantees (all lengths and offsets in UTF-16 code units, what `String.prototype.slice` takes):
 *
 * - `text === document.text.slice(start, end)` for every chunk; chunks neither start nor end with
 *   whitespace, and never split a surrogate pair or a grapheme cluster (short of a combining mark
 *   written straight after whitespace, which stays with the next chunk).
 * - Chunks come in text order, `index` 0, 1, 2…; each starts after the previous one starts and ends
 *   after it ends. Every non-whitespace character of the text lies in at least one chunk.
 * - A chunk is at most `targetChars` long, except one made of a single grapheme cluster longer than
 *   that (only possible with a tiny target).
 * - A chunk is never cut inside a word (whitespace-delimited, or as `Intl.Segmenter` sees words in
 *   text without spaces) unless that word alone is longer than `targetChars`.
 * - Text that is empty or only whitespace gives no chunks.
 * - The result depends only on the input (and, for text without spaces, on the runtime's ICU word
 *   rules): the same text and options always give the same chunks.
 */
import type { ExtractedDocument, Section } from "./extract.js"

/** A piece of a document's text, ready to index. */
export interface Chunk {
  /** Position in the document's chunk list, from 0. */
  index: number
  /** Exactly `document.text.slice(start, end)`. */
  text: string
  /** Offset of the first character in the document's text (inclusive). */
  start: number
  /** Offset after the last character (exclusive). */
  end: number
  /**
   * The label of the section the chunk starts in (for citations), or, when it starts outside every
   * section, of the first section it overlaps; `null` when it overlaps none (documents without
   * sections).
   */
  section: string | null
}

/** Options of {@link chunkText}. */
export interface ChunkOptions {
  /** The size a chunk aims for and never exceeds, in characters; a positive integer, default {@link defaultTargetChars}. */
  targetChars?: number | undefined
  /** How many characters consecutive chunks may share; an integer from 0 to `targetChars - 1`, default {@link defaultOverlapChars}. */
  overlapChars?: number | undefined
}

/** What {@link chunkText} reads: an {@link ExtractedDocument} or anything shaped like one. */
export type ChunkableDocument = Pick<ExtractedDocument, "text"> & { readonly sections: ReadonlyArray<Readonly<Section>> }

/** Default chunk size, in characters. */
export const defaultTargetChars = 1000

/** Default overlap between consecutive chunks, in characters. */
export const defaultOverlapChars = 150

/** Break strengths, weakest first; a higher number is a better place to end a chunk. */
const Level = { Cut: 0, Word: 1, Sentence: 2, Line: 3, Paragraph: 4, Section: 5 } as const
type Level = (typeof Level)[keyof typeof Level]

/**
 * A place where a chunk may end: the chunk ends at `end` (exclusive) and, without overlap, the
 * next one starts at `next` (after the whitespace; equal to `end` where no whitespace separates).
 */
interface Break {
  end: number
  next: number
  level: Level
}

/** Whitespace runs, and CJK sentence marks directly followed by more text. */
const breakPattern = /\s+|[。！？]+(?![\s。！？])/g

const sentenceTerminal = /[.!?…。！？‼⁇⁈⁉]/
const closingPunctuation = /["'”’»)\]}」』）]/
const lineBreak = /\r\n|[\n\r\u2028\u2029\u0085\u000b\u000c]/g

/** Scripts written without spaces between words: inside them, `Intl.Segmenter` word boundaries count as word starts. */
const spacelessScript =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u

// A fixed locale: word rules must not depend on the machine's default locale.
const wordSegmenter = new Intl.Segmenter("en", { granularity: "word" })
const graphemeSegmenter = new Intl.Segmenter("en", { granularity: "grapheme" })

/** Extra characters given to a segmenter past the window, so boundaries near the window's end are real ones. */
const segmenterContext = 64

/** Whether the text just before `end` (skipping closing quotes and brackets) ends a sentence. */
const endsSentence = (text: string, end: number): boolean => {
  let i = end - 1
  for (let skipped = 0; i >= 0 && skipped < 3 && closingPunctuation.test(text[i]!); skipped++) i--
  return i >= 0 && sentenceTerminal.test(text[i]!)
}

/** The kind of the break made by the whitespace `text[end, next)` (empty after a CJK sentence mark). */
const levelOf = (text: string, end: number, next: number): Level => {
  if (end === next) return Level.Sentence
  const lineBreaks = text.slice(end, next).match(lineBreak)?.length ?? 0
  if (lineBreaks >= 2) return Level.Paragraph
  if (lineBreaks === 1) return Level.Line
  return endsSentence(text, end) ? Level.Sentence : Level.Word
}

/** Where the whitespace run that starts at `from` ends. */
const skipWhitespace = (text: string, from: number): number => {
  let i = from
  while (i < text.length && /\s/.test(text[i]!)) i++
  return i
}

/**
 * Every break whose `end` lies in `(after, upTo]`, in text order. Reads only about `upTo - after`
 * characters. A break where a section ends or starts (`sectionEdges`) is of kind `Section`.
 */
const breaksIn = (text: string, after: number, upTo: number, sectionEdges: ReadonlySet<number>): Array<Break> => {
  const breaks: Array<Break> = []
  if (upTo <= after) return breaks
  // One character of context after the window: a CJK mark is a break only if no whitespace follows.
  const slice = text.slice(after + 1, upTo + 2)
  breakPattern.lastIndex = 0
  for (let match = breakPattern.exec(slice); match !== null; match = breakPattern.exec(slice)) {
    const isWhitespace = /\s/.test(match[0][0]!)
    const end = after + 1 + match.index + (isWhitespace ? 0 : match[0].length)
    if (end > upTo) break
    if (isWhitespace) {
      // The tail of a whitespace run that began before the window is no place to end a chunk.
      if (/\s/.test(text[end - 1] ?? "")) continue
      const next = skipWhitespace(text, end)
      const level = sectionEdges.has(end) || sectionEdges.has(next) ? Level.Section : levelOf(text, end, next)
      breaks.push({ end, next, level })
    } else if (end < text.length) {
      breaks.push({ end, next: end, level: sectionEdges.has(end) ? Level.Section : Level.Sentence })
    }
  }
  return breaks
}

/**
 * The boundaries `Intl.Segmenter` sees in `(after, upTo]`, in text order, segmenting from `from`
 * (at or before `after`, ideally some way before it, as context) to a little past `upTo`.
 */
const segmentBoundaries = (
  segmenter: Intl.Segmenter,
  text: string,
  from: number,
  after: number,
  upTo: number
): Array<number> => {
  const sliceEnd = Math.min(text.length, upTo + segmenterContext)
  const boundaries: Array<number> = []
  for (const { index } of segmenter.segment(text.slice(from, sliceEnd))) {
    const position = from + index
    if (position > upTo) break
    if (position > after) boundaries.push(position)
  }
  if (sliceEnd === text.length && sliceEnd > after && sliceEnd <= upTo) boundaries.push(sliceEnd)
  return boundaries
}

/**
 * Where the segment of `segmenter` holding position `at` (`start <= at < text.length`) starts,
 * segmenting the text from `start` with some context past `at`. Uses `Segments.containing`, so
 * only the neighbourhood of `at` is examined, not every segment before it.
 */
const segmentStart = (segmenter: Intl.Segmenter, text: string, start: number, at: number): number => {
  const sliceEnd = Math.min(text.length, at + segmenterContext)
  return start + (segmenter.segment(text.slice(start, sliceEnd)).containing(at - start)?.index ?? at - start)
}

/** Where the grapheme cluster starting at `at` ends. */
const graphemeEnd = (text: string, at: number): number => {
  for (let sliceEnd = Math.min(text.length, at + segmenterContext); ; sliceEnd = Math.min(text.length, 2 * sliceEnd - at)) {
    const first = graphemeSegmenter.segment(text.slice(at, sliceEnd)).containing(0)
    const end = at + (first?.segment.length ?? 1)
    // A cluster reaching the slice's end may go on past it (a very long one): look further.
    if (end < sliceEnd || sliceEnd === text.length) return end
  }
}

/**
 * The end of a chunk starting at `start` that must end in `(after, limit]` where the window holds
 * no whitespace or sentence break (`limit` is before the end of the text): the latest word boundary,
 * else the latest grapheme boundary, else (one grapheme wider than the window) the end of that
 * grapheme.
 */
const cutRun = (text: string, start: number, after: number, limit: number): number => {
  const word = segmentStart(wordSegmenter, text, start, limit)
  if (word > after) return word
  const grapheme = segmentStart(graphemeSegmenter, text, start, limit)
  return grapheme > after ? grapheme : graphemeEnd(text, grapheme)
}

/** The best break in `breaks` for a chunk from `start` aiming at `target` characters (see the module comment). */
const chooseBreak = (breaks: ReadonlyArray<Break>, start: number, target: number): Break | undefined => {
  const half = start + target / 2
  let best: Break | undefined
  for (const candidate of breaks) {
    if (candidate.end < half) continue
    if (best === undefined || candidate.level >= best.level) best = candidate
  }
  return best ?? breaks.at(-1)
}

/**
 * Where the chunk after `[start, end)` starts: the earliest word start in `[end - overlap, end)`
 * after `start` (after whitespace or a CJK sentence mark, or between two words of a script written
 * without spaces), or `fallback` (the start without overlap) when there is none.
 */
const overlapStart = (
  text: string,
  start: number,
  end: number,
  overlap: number,
  fallback: number,
  sectionStart: number | undefined
): number => {
  if (overlap <= 0) return fallback
  let lower = Math.max(start + 1, end - overlap)
  if (sectionStart !== undefined && sectionStart >= lower) {
    // Never reach back over the start of the section the next chunk would start in without overlap.
    if (sectionStart >= end) return fallback
    if (!/\s/.test(text[sectionStart] ?? " ")) return sectionStart
    lower = sectionStart
  }
  if (lower >= end) return fallback
  for (let position = lower; position < end; position++) {
    const at = text[position]!
    const before = text[position - 1]!
    if (/\s/.test(at)) continue
    if (/\s/.test(before) || /[。！？]/.test(before)) return position
  }
  // Text without spaces (CJK, Thai…): a word boundary next to a letter of such a script.
  // Segment from the chunk's start (a boundary) or a little before the window, for real boundaries only.
  const from = Math.max(start, lower - segmenterContext)
  for (const position of segmentBoundaries(wordSegmenter, text, from, lower - 1, end - 1)) {
    const at = text[position] ?? ""
    if (/\s/.test(at)) continue
    if (spacelessScript.test(at) || spacelessScript.test(text[position - 1] ?? "")) return position
  }
  return fallback
}

const checkOptions = (options: ChunkOptions | undefined): { target: number; overlap: number } => {
  const target = options?.targetChars ?? defaultTargetChars
  const overlap = options?.overlapChars ?? defaultOverlapChars
  if (!Number.isSafeInteger(target) || target < 1) {
    throw new RangeError(`targetChars must be a positive integer, got ${target}`)
  }
  if (!Number.isSafeInteger(overlap) || overlap < 0 || overlap >= target) {
    throw new RangeError(`overlapChars must be an integer from 0 to targetChars - 1 (${target - 1}), got ${overlap}`)
  }
  return { target, overlap }
}

/** What chunking needs to know about a document's sections. */
interface SectionIndex {
  /** Offsets where a section starts or ends: breaks there are of kind `Section`. */
  readonly edges: ReadonlySet<number>
  /**
   * The label for a chunk `[start, end)`: the section holding `start` (the one that starts last, if
   * several do), else the first section overlapping the chunk, else `null`.
   */
  readonly label: (start: number, end: number) => string | null
  /** The latest section start before `position`, if any. */
  readonly startBefore: (position: number) => number | undefined
}

/** Indexes the non-empty sections (empty ones hold no text and are ignored), in any order given. */
const indexSections = (sections: ReadonlyArray<Readonly<Section>>): SectionIndex => {
  const sorted = sections.filter((section) => section.end > section.start).sort((a, b) => a.start - b.start)
  const edges = new Set<number>()
  for (const section of sorted) edges.add(section.start).add(section.end)
  // The furthest any of the first i + 1 sections reaches: scanning back stops once nothing can hold `start`.
  const reach: Array<number> = []
  for (const section of sorted) reach.push(Math.max(reach.at(-1) ?? -Infinity, section.end))
  /** The index of the last section starting at or before `position` (-1 if none). */
  const lastStartingBy = (position: number): number => {
    let low = 0
    let high = sorted.length - 1
    let last = -1
    while (low <= high) {
      const middle = (low + high) >> 1
      if (sorted[middle]!.start <= position) {
        last = middle
        low = middle + 1
      } else {
        high = middle - 1
      }
    }
    return last
  }
  return {
    edges,
    label: (start, end) => {
      const last = lastStartingBy(start)
      for (let i = last; i >= 0 && reach[i]! > start; i--) {
        if (sorted[i]!.end > start) return sorted[i]!.label
      }
      const following = sorted[last + 1]
      return following !== undefined && following.start < end ? following.label : null
    },
    startBefore: (position) => {
      const last = lastStartingBy(position - 1)
      return last >= 0 ? sorted[last]!.start : undefined
    }
  }
}

/**
 * Cuts `document.text` into chunks of at most `targetChars` characters (default 1000) that
 * overlap by up to `overlapChars` (default 150), on the strongest boundary near the target size;
 * see the module comment for the rules and guarantees. Throws a `RangeError` for invalid options.
 */
export const chunkText = (document: ChunkableDocument, options?: ChunkOptions): Array<Chunk> => {
  const { target, overlap } = checkOptions(options)
  const { text } = document
  const textEnd = text.trimEnd().length
  let start = skipWhitespace(text, 0)
  if (start >= textEnd) return []
  const sections = indexSections(document.sections)
  const chunks: Array<Chunk> = []
  const push = (from: number, to: number): void => {
    chunks.push({ index: chunks.length, text: text.slice(from, to), start: from, end: to, section: sections.label(from, to) })
  }
  // Where the previous chunk ended (a new chunk must end after it) and where the next would start without overlap.
  let previousEnd = -1
  let plainStart = start
  const edges = [...sections.edges].filter((edge) => edge < textEnd).sort((a, b) => a - b)
  /** The first section edge after `position`: a chunk never runs across one. */
  const edgeAfter = (position: number): number | undefined => edges.find((edge) => edge > position)
  for (;;) {
    const limit = start + target
    const edge = edgeAfter(Math.max(start, previousEnd))
    if (textEnd <= limit && edge === undefined) {
      push(start, textEnd)
      return chunks
    }
    const after = Math.max(start, previousEnd)
    let chosen: Break | undefined =
      edge !== undefined && edge <= limit && text.slice(start, edge).trim().length > 0
        ? { end: text.slice(0, edge).trimEnd().length, next: edge, level: Level.Section }
        : chooseBreak(breaksIn(text, after, Math.min(limit, textEnd), sections.edges), start, target)
    if (chosen === undefined && start < plainStart) {
      // Nothing to end on past the previous chunk within reach of the overlap: drop the overlap.
      start = plainStart
      continue
    }
    chosen ??= ((): Break => {
      const end = cutRun(text, start, after, limit)
      return { end, next: end, level: Level.Cut }
    })()
    const end = chosen.end
    push(start, end)
    // A cut can reach the end of the text when its last grapheme is wider than the window.
    if (end >= textEnd) return chunks
    previousEnd = end
    plainStart = skipWhitespace(text, chosen.next)
    start = overlapStart(text, start, end, overlap, plainStart, sections.startBefore(plainStart + 1))
  }
}
