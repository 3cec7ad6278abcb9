/**
 * Ranking statistics of one organization: its row of `search_statistics` (passages, pages and
 * their words, kept by migration 0017's triggers) and how many of its passages and pages hold a
 * word, counted in the index within the organization's scope and kept until its row's change
 * counter moves. On SQLite, while the organization holds every passage of the index (one
 * organization, the usual local server), a passage frequency is read from the index's vocabulary
 * table instead of counted: the same number.
 */
import { Effect } from "effect"
import type { Reads } from "../../platform/sql/read-connection.js"
import { surfaceOf } from "./analyzer.js"
import { matchExpression } from "./query.js"

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

/** Statistics reads over the read connection, for the dialect's index. */
export const searchStatistics = (reader: Reads, dialect: "sqlite" | "pg") => {
  const count = (text: string, params: ReadonlyArray<unknown>) =>
    Effect.orDie(reader.all<{ n: number }>(text, params)).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))
  const cache = new Map<string, { changes: number; frequencies: Map<string, number> }>()

  /** How many of the organization's passages hold `word`. */
  const passageFrequency = (scope: string, stem: string, wholeIndex: boolean) => {
    const word = surfaceOf(stem)
    if (dialect === "pg") {
      return count(
        "SELECT count(*) AS n FROM passages t WHERE t.search @@ plainto_tsquery('svc_english', ?) AND t.scope_search @@ to_tsquery('simple', ?)",
        [word, scope]
      )
    }
    return wholeIndex
      ? count("SELECT doc AS n FROM passages_vocab WHERE term = ?", [stem])
      : count("SELECT count(*) AS n FROM passages_fts WHERE passages_fts MATCH ?", [`{text}: (${matchExpression([word])}) AND {scope}: "${scope}"`])
  }
  /** How many of the organization's pages (folders aside) hold `word`, in the title or the body. */
  const pageFrequency = (organizationId: string, stem: string) => {
    const word = surfaceOf(stem)
    return dialect === "pg"
      ? count(
          "SELECT count(*) AS n FROM pages t WHERE t.search @@ plainto_tsquery('svc_english', ?) AND t.organization_id = ? AND t.template_key != 'folder'",
          [word, organizationId]
        )
      : count(
          `SELECT count(*) AS n FROM pages_fts f JOIN pages p ON p.fts_key = f.rowid
           WHERE pages_fts MATCH ? AND p.organization_id = ? AND p.template_key != 'folder'`,
          [matchExpression([word]), organizationId]
        )
  }

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
      ? Effect.map(count("SELECT value AS n FROM search_counters WHERE name = 'passages'", []), (total) => statistics.passages === total)
      : Effect.succeed(false)

  return {
    /** The organization's row (zeros when it has nothing indexed). */
    organization: (scope: string) =>
      Effect.orDie(
        reader.all<{ passages: number; passage_words: number; pages: number; page_words: number; changes: number }>(
          "SELECT passages, passage_words, pages, page_words, changes FROM search_statistics WHERE scope = ?",
          [scope]
        )
      ).pipe(
        Effect.map((rows): OrganizationStatistics => {
          const row = rows[0]
          return row
            ? { passages: Number(row.passages), passageWords: Number(row.passage_words), pages: Number(row.pages), pageWords: Number(row.page_words), changes: Number(row.changes) }
            : empty
        })
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
