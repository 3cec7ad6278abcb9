/**
 * Ranking statistics of one organization: its row of `search_statistics` (passages, pages and
 * their words, kept by migration 0017's triggers) and how many of its passages and pages hold a
 * word, counted in the index within the organization's scope and kept until its row's change
 * counter moves. On SQLite, while the organization holds every passage of the index (one
 * organization, the usual local server), a passage frequency is read from the index's vocabulary
 * table instead of counted: the same number.
 */
import { Effect } from "effect"
import { surfaceOf } from "./analyzer.js"
import type { SearchIndexRepo } from "./repo.js"

/** An organization's row of `search_statistics`. */
export interface OrganizationStatistics {
  readonly passages: number
  readonly passageWords: number
  readonly pages: number
  readonly pageWords: number
  readonly changes: number
}

const organizationsKept = 1_000
const frequenciesKept = 20_000

const empty: OrganizationStatistics = { passages: 0, passageWords: 0, pages: 0, pageWords: 0, changes: -1 }

/** Statistics read through the search index's repository, for the dialect's index. */
export const searchStatistics = (index: SearchIndexRepo, dialect: "sqlite" | "pg") => {
  const cache = new Map<string, { changes: number; frequencies: Map<string, number> }>()

  /** How many of the organization's passages hold `stem`'s word. */
  const passageFrequency = (scope: string, stem: string, wholeIndex: boolean) => index.passageFrequency(scope, surfaceOf(stem), stem, wholeIndex)
  /** How many of the organization's pages (folders aside) hold `stem`'s word, in the title or the body. */
  const pageFrequency = (organizationId: string, stem: string) => index.pageFrequency(organizationId, surfaceOf(stem))

  /** Frequencies kept per organization until its change counter moves. */
  const kept = (key: string, statistics: OrganizationStatistics) => {
    let entry = cache.get(key)
    if (!entry || entry.changes !== statistics.changes) {
      if (cache.size >= organizationsKept) cache.clear()
      entry = { changes: statistics.changes, frequencies: new Map() }
      cache.set(key, entry)
    }
    return entry.frequencies
  }
  const wholeIndexOf = (statistics: OrganizationStatistics) =>
    dialect === "sqlite"
      ? Effect.map(index.indexedPassages(), (total) => statistics.passages === total)
      : Effect.succeed(false)

  return {
    /** The organization's row (zeros when it has nothing indexed). */
    organization: (scope: string) =>
      Effect.map(
        index.statisticsRow(scope),
        (row): OrganizationStatistics =>
          row
            ? { passages: Number(row.passages), passageWords: Number(row.passage_words), pages: Number(row.pages), pageWords: Number(row.page_words), changes: Number(row.changes) }
            : empty
      ),
    /**
     * How many of the organization's passages and pages hold each stem, as of `statistics` (kept
     * until the organization's change counter moves).
     */
    frequencies: (scope: string, organizationId: string, statistics: OrganizationStatistics, stems: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const frequencies = kept(scope, statistics)
        const missing = stems.filter((stem) => !frequencies.has(stem))
        if (missing.length > 0) {
          const wholeIndex = yield* wholeIndexOf(statistics)
          for (const stem of missing) {
            const passages = statistics.passages > 0 ? yield* passageFrequency(scope, stem, wholeIndex) : 0
            const pages = statistics.pages > 0 ? yield* pageFrequency(organizationId, stem) : 0
            if (frequencies.size >= frequenciesKept) frequencies.clear()
            frequencies.set(stem, passages + pages)
          }
        }
        return new Map(stems.map((stem) => [stem, frequencies.get(stem) ?? 0]))
      }),
    /**
     * Frequencies estimated for feedback words: from the organization's passages alone, scaled to
     * its passages and pages (pages taken to use words as its passages do), which costs one index
     * look-up a word instead of two. Only for an organization with passages.
     */
    estimatedFrequencies: (scope: string, organizationId: string, statistics: OrganizationStatistics, stems: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const frequencies = kept(`${scope}~`, statistics)
        const missing = stems.filter((stem) => !frequencies.has(stem))
        if (missing.length > 0) {
          const wholeIndex = yield* wholeIndexOf(statistics)
          for (const stem of missing) {
            if (frequencies.size >= frequenciesKept) frequencies.clear()
            frequencies.set(stem, yield* passageFrequency(scope, stem, wholeIndex))
          }
        }
        const scale = (statistics.passages + statistics.pages) / statistics.passages
        return new Map(stems.map((stem) => [stem, Math.round((frequencies.get(stem) ?? 0) * scale)]))
      })
  }
}
