/**
 * The English stop words of the maintained `stopword` package (its `eng` list), for the retrieval
 * benchmark's reference BM25 and the ranking regression test.
 */
import { eng } from "stopword"

/** `stopword`'s English list, lower-case. */
export const englishStopWords: ReadonlySet<string> = new Set(eng.map((word) => word.toLowerCase()))

/** Whether `word` (any case) is an English stop word. */
export const isStopWord = (word: string): boolean => englishStopWords.has(word.toLowerCase())
