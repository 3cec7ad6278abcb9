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
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 32 || code === 10) count++
  }
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

/** How often each stem occurs in `text`, stop words left out; with `only`, just those stems. */
export const stemCounts = (text: string, only?: ReadonlySet<string>): Map<string, number> => {
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
