/**
 * How search reads text: words (letters and digits), English stop words (the maintained
 * `stopword` package's list, never a hand list), Porter stems (as the index's `porter unicode61`
 * tokenizer and PostgreSQL's `svc_english` configuration stem), and lengths in words as the
 * `search_statistics` triggers count them (migration 0017).
 */
import { eng } from "stopword"
import { stemmer } from "stemmer"

/** A word of text: a run of letters and digits. */
export const wordPattern = /[\p{L}\p{N}]+/gu

const stopWords: ReadonlySet<string> = new Set(eng)

/** Whether a (lower-case) word is an English stop word: it never decides a ranking or a highlight. */
export const isStopWord = (word: string): boolean => stopWords.has(word.toLowerCase())

const stems = new Map<string, string>()
const surfaces = new Map<string, string>()
const stemsKept = 50_000

/** A word as the index compares it: without diacritics, lower-case, Porter-stemmed (as `porter unicode61`). */
export const stemOf = (word: string): string => {
  let stem = stems.get(word)
  if (stem === undefined) {
    stem = stemmer(word.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase())
    if (stems.size >= stemsKept) {
      stems.clear()
      surfaces.clear()
    }
    stems.set(word, stem)
    if (!surfaces.has(stem)) surfaces.set(stem, word)
  }
  return stem
}

/**
 * A word that stems to `stem` (one seen by {@link stemOf}), to search the index with: its
 * tokenizer stems the words it is given, and a stem stemmed again may change.
 */
export const surfaceOf = (stem: string): string => surfaces.get(stem) ?? stem

/**
 * The words of a query that rank: those that are not stop words. A query made only of stop words
 * ("to be or not to be") keeps them all, since nothing else could rank it.
 */
export const rankingTerms = (terms: ReadonlyArray<string>): ReadonlyArray<string> => {
  const keywords = terms.filter((term) => !isStopWord(term))
  return keywords.length > 0 ? keywords : terms
}

/**
 * A text's length in words as migration 0017's triggers count it: its spaces and line breaks,
 * plus one. (Cheap in SQL on both dialects; BM25 needs only lengths relative to their average.)
 */
export const wordCount = (text: string): number => {
  let count = 1
  for (let at = text.indexOf(" "); at !== -1; at = text.indexOf(" ", at + 1)) count++
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++
  return count
}

const keywordStems = new Map<string, string | null>()

/** A word's stem, or null for a stop word: one look-up per word of a text being scored. */
const keywordStem = (word: string): string | null => {
  let stem = keywordStems.get(word)
  if (stem === undefined) {
    stem = isStopWord(word) ? null : stemOf(word)
    if (keywordStems.size >= stemsKept) keywordStems.clear()
    keywordStems.set(word, stem)
  }
  return stem
}

/**
 * The first two letters of each stem: a Porter stem keeps the start of its word, so an ASCII word
 * that starts otherwise cannot stem to one of them (and is never looked up).
 */
const prefixesOf = (stems: ReadonlySet<string>): ReadonlySet<string> => new Set([...stems].map((stem) => stem.slice(0, 2)))

/** Whether a word may stem to one of `prefixes`' stems (always, for a word not starting in ASCII). */
const mayStemTo = (word: string, prefixes: ReadonlySet<string>): boolean =>
  word.charCodeAt(0) >= 128 || (word.length > 1 && word.charCodeAt(1) >= 128) || prefixes.has(word.slice(0, 2).toLowerCase())

/** Only ASCII (no word of it needs its diacritics stripped or Unicode's letter classes). */
const asciiOnly = /^[\x00-\x7f]*$/
const isAsciiWordCode = (code: number) => (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90)

/**
 * What to look for in lower-case ASCII text to find every word that may stem to one of `stems`: a
 * Porter stem differs from its word in at most its last two letters (the longest rewrite, "biliti"
 * to "ble", changes two; every other step removes letters or changes the last one), so each stem
 * but its last two letters (two at least) starts any such word. Prefixes that start another are
 * kept alone (a word is found once); stems of other characters cannot occur in ASCII text.
 */
const searchPrefixes = (stems: ReadonlySet<string>): ReadonlyArray<string> => {
  const prefixes = [...new Set([...stems].filter((stem) => /^[a-z0-9]+$/.test(stem)).map((stem) => stem.slice(0, Math.max(2, stem.length - 2))))].sort()
  return prefixes.filter((prefix, i) => !prefixes.slice(0, i).some((shorter) => prefix.startsWith(shorter)))
}
/** How a set of stems is looked for: each prefix by `indexOf`, or, for more than two, one expression for all. */
interface Finder {
  readonly prefixes: ReadonlyArray<string>
  readonly pattern: RegExp | null
}
const findersKept = new WeakMap<ReadonlySet<string>, Finder>()
const finderOf = (stems: ReadonlySet<string>): Finder => {
  let finder = findersKept.get(stems)
  if (finder === undefined) {
    const prefixes = searchPrefixes(stems)
    finder = { prefixes, pattern: prefixes.length > 2 ? new RegExp(`(?<![a-z0-9])(?:${prefixes.join("|")})[a-z0-9]*`, "g") : null }
    findersKept.set(stems, finder)
  }
  return finder
}

/**
 * {@link stemCounts} of ASCII text for a few stems, without reading every word: the search
 * prefixes are found in the lower-cased text (by `indexOf`, or one regular expression for more
 * than two), and only the words they start are stemmed.
 */
const asciiStemCounts = (text: string, only: ReadonlySet<string>): Map<string, number> => {
  const counts = new Map<string, number>()
  const count = (word: string) => {
    const stem = keywordStem(word)
    if (stem !== null && only.has(stem)) counts.set(stem, (counts.get(stem) ?? 0) + 1)
  }
  const finder = finderOf(only)
  const lower = text.toLowerCase()
  if (finder.pattern !== null) {
    for (const match of lower.matchAll(finder.pattern)) count(match[0])
    return counts
  }
  for (const prefix of finder.prefixes) {
    let at = lower.indexOf(prefix)
    while (at !== -1) {
      if (at > 0 && isAsciiWordCode(lower.charCodeAt(at - 1))) {
        at = lower.indexOf(prefix, at + 1)
        continue
      }
      let end = at + prefix.length
      while (end < lower.length && isAsciiWordCode(lower.charCodeAt(end))) end++
      count(lower.slice(at, end))
      at = lower.indexOf(prefix, end)
    }
  }
  return counts
}

/** Finds the words of texts that stem to one set of stems (a query's), as the index matches them. */
export interface StemMatcher {
  /** Where the first such word of `text` starts, or -1. */
  readonly first: (text: string) => number
  /** `text` with each such word replaced by what `mark` makes of it. */
  readonly mark: (text: string, mark: (word: string) => string) => string
}

/**
 * A {@link StemMatcher} for `stems`, made once per query: in ASCII text only the words that
 * start with a stem's search prefix (see `searchPrefixes`) are stemmed; other text word by word.
 */
export const stemMatcher = (stems: ReadonlySet<string>): StemMatcher => {
  const prefixes = searchPrefixes(stems)
  const asciiWords = prefixes.length > 0 ? new RegExp(`(?<![A-Za-z0-9])(?:${prefixes.join("|")})[A-Za-z0-9]*`, "gi") : null
  const twoLetters = prefixesOf(stems)
  const matches = (word: string) => stems.has(stemOf(word))
  return {
    first: (text) => {
      if (stems.size === 0) return -1
      if (asciiOnly.test(text)) {
        if (asciiWords === null) return -1
        for (const match of text.matchAll(asciiWords)) if (matches(match[0])) return match.index
        return -1
      }
      for (const match of text.matchAll(wordPattern)) if (mayStemTo(match[0], twoLetters) && matches(match[0])) return match.index
      return -1
    },
    mark: (text, mark) => {
      if (stems.size === 0) return text
      const words = asciiOnly.test(text) ? asciiWords : wordPattern
      return words === null ? text : text.replace(words, (word) => (matches(word) ? mark(word) : word))
    }
  }
}

/** How often each stem occurs in `text`, stop words left out; with `only`, just those stems. */
export const stemCounts = (text: string, only?: ReadonlySet<string>): Map<string, number> => {
  if (only !== undefined && asciiOnly.test(text)) return asciiStemCounts(text, only)
  const counts = new Map<string, number>()
  const prefixes = only === undefined ? undefined : prefixesOf(only)
  for (const match of text.matchAll(wordPattern)) {
    if (prefixes !== undefined && !mayStemTo(match[0], prefixes)) continue
    const stem = keywordStem(match[0])
    if (stem === null || (only !== undefined && !only.has(stem))) continue
    counts.set(stem, (counts.get(stem) ?? 0) + 1)
  }
  return counts
}
