/**
 * The search index's repository: every statement search runs over the full-text indexes (SQLite
 * FTS5 tables, or the tsvector columns on PostgreSQL through `pg-index-repo.ts`) and over the rows
 * their hits name (passages with their sources, pages, memories), plus the ranking statistics the
 * migration 0017 triggers keep. All on the read connection; search writes nothing here (its credit
 * and activity entry belong to their owners). The full-text indexes are kept by triggers and read
 * by search only; the rows a hit names are read here in the same statement as the hit's filter
 * (a source's status, a page's Knowledgebase), one indexed read on the hot path.
 */
import { Effect } from "effect"
import type { Reads } from "../../platform/sql/read-connection.js"
import { matchExpression } from "./query.js"

/** A passage a hit names, with its document's name and Knowledgebase. */
export interface PassageRow {
  readonly id: number
  readonly source_id: string
  readonly section: string | null
  readonly text: string
  readonly name: string
  readonly knowledgebase_id: string
}
/** A page a hit names. */
export interface PageRow {
  readonly id: string
  readonly knowledgebase_id: string
  readonly title: string
  readonly markdown: string
}
/** A memory a hit names. */
export interface MemoryRow {
  readonly id: string
  readonly text: string
}
/** An organization's row of `search_statistics`, as stored. */
export interface StatisticsRow {
  readonly passages: number
  readonly passage_words: number
  readonly pages: number
  readonly page_words: number
  readonly changes: number
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ")
const wordsSql = (dialect: "sqlite" | "pg", x: string) =>
  `(length(${x}) - length(replace(replace(${x}, ' ', ''), ${dialect === "pg" ? "chr(10)" : "char(10)"}, '')) + 1)`

/** Search's statements over `reader`, for the dialect's index. */
export const searchIndexRepo = (reader: Reads, dialect: "sqlite" | "pg") => {
  const ids = (text: string, params: ReadonlyArray<unknown>) =>
    Effect.orDie(reader.all<{ rowid: number }>(text, params)).pipe(Effect.map((rows) => rows.map((row) => Number(row.rowid))))
  const rowsById = <Row>(text: string, keys: ReadonlyArray<number>) =>
    keys.length === 0 ? Effect.succeed([] as ReadonlyArray<Row>) : Effect.orDie(reader.all<Row>(text, keys))
  const count = (text: string, params: ReadonlyArray<unknown>) =>
    Effect.orDie(reader.all<{ n: number }>(text, params)).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))

  return {
    /** Passages by id, of ready and enabled documents only. */
    passagesByIds: (passageIds: ReadonlyArray<number>) =>
      rowsById<PassageRow>(
        `SELECT p.id, p.source_id, p.section, p.text, s.name, s.knowledgebase_id
         FROM passages p JOIN sources s ON s.id = p.source_id
         WHERE p.id IN (${placeholders(passageIds.length)}) AND s.status = 'ready' AND s.disabled = 0`,
        passageIds
      ),
    /**
     * Passages by id with their scope tokens and whether their document is searchable (ready and
     * enabled), whatever their document's state: the first candidates' rows and scopes in one read.
     */
    passagesWithScopes: (passageIds: ReadonlyArray<number>) =>
      rowsById<PassageRow & { readonly scope: string; readonly searchable: number }>(
        `SELECT p.id, p.source_id, p.section, p.text, s.name, s.knowledgebase_id, p.scope,
                (s.status = 'ready' AND s.disabled = 0) AS searchable
         FROM passages p JOIN sources s ON s.id = p.source_id
         WHERE p.id IN (${placeholders(passageIds.length)})`,
        passageIds
      ),
    /** SQLite: passages in `scope` holding a word, at most `limit`, ranked by FTS5's `bm25()` or in index order. */
    scopedPassageIds: (scope: string, words: ReadonlyArray<string>, ranked: boolean, limit: number) =>
      ids(`SELECT rowid FROM passages_fts WHERE passages_fts MATCH ? ORDER BY ${ranked ? "bm25(passages_fts, 1.0, 0.0), " : ""}rowid LIMIT ?`, [
        `{text}: (${matchExpression(words)}) AND {scope}: "${scope}"`,
        limit
      ]),
    /** SQLite: the best passages holding a word, whatever their scope, at most `limit`. */
    rankedPassageIds: (words: ReadonlyArray<string>, limit: number) =>
      ids("SELECT rowid FROM passages_fts WHERE passages_fts MATCH ? ORDER BY bm25(passages_fts, 1.0, 0.0), rowid LIMIT ?", [
        `{text}: (${matchExpression(words)})`,
        limit
      ]),
    /** The scope tokens of passages by id. */
    passageScopes: (passageIds: ReadonlyArray<number>) =>
      rowsById<{ id: number; scope: string }>(`SELECT id, scope FROM passages WHERE id IN (${placeholders(passageIds.length)})`, passageIds),
    /** SQLite: the best pages (folders aside) of the Knowledgebases holding a word, by `fts_key`. */
    pageCandidateKeys: (knowledgebaseIds: ReadonlyArray<string>, words: ReadonlyArray<string>, limit: number) =>
      ids(
        `SELECT f.rowid AS rowid FROM pages_fts f JOIN pages p ON p.fts_key = f.rowid
         WHERE pages_fts MATCH ? AND p.knowledgebase_id IN (${placeholders(knowledgebaseIds.length)}) AND p.template_key != 'folder'
         ORDER BY bm25(pages_fts, 2.0, 1.0), f.rowid LIMIT ?`,
        [matchExpression(words), ...knowledgebaseIds, limit]
      ),
    /** Pages by `fts_key`. */
    pagesByKeys: (keys: ReadonlyArray<number>) =>
      rowsById<PageRow>(`SELECT id, knowledgebase_id, title, markdown FROM pages WHERE fts_key IN (${placeholders(keys.length)})`, keys),
    /** How many memories the member has, and their words in all. */
    memoryTotals: (memberId: string) =>
      Effect.orDie(
        reader.all<{ n: number; w: number }>(
          `SELECT count(*) AS n, coalesce(sum(${wordsSql(dialect, "text")}), 0) AS w FROM memories WHERE member_id = ?`,
          [memberId]
        )
      ).pipe(Effect.map((rows) => ({ units: Number(rows[0]?.n ?? 0), words: Number(rows[0]?.w ?? 0) }))),
    /** How many of the member's memories hold `word`. */
    memoryFrequency: (memberId: string, word: string) =>
      dialect === "pg"
        ? count("SELECT count(*) AS n FROM memories t WHERE t.search @@ plainto_tsquery('svc_english', ?) AND t.member_id = ?", [word, memberId])
        : count("SELECT count(*) AS n FROM memories_fts f JOIN memories m ON m.fts_key = f.rowid WHERE memories_fts MATCH ? AND m.member_id = ?", [
            matchExpression([word]),
            memberId
          ]),
    /** SQLite: the member's best memories holding a word, by `fts_key`. */
    memoryCandidateKeys: (memberId: string, words: ReadonlyArray<string>, limit: number) =>
      ids(
        `SELECT f.rowid AS rowid FROM memories_fts f JOIN memories m ON m.fts_key = f.rowid
                 WHERE memories_fts MATCH ? AND m.member_id = ? ORDER BY bm25(memories_fts), f.rowid LIMIT ?`,
        [matchExpression(words), memberId, limit]
      ),
    /** Memories by `fts_key`. */
    memoriesByKeys: (keys: ReadonlyArray<number>) =>
      rowsById<MemoryRow>(`SELECT id, text FROM memories WHERE fts_key IN (${placeholders(keys.length)})`, keys),
    /** The organization's row of `search_statistics`, if it has one. */
    statisticsRow: (scope: string) =>
      Effect.orDie(
        reader.all<StatisticsRow>("SELECT passages, passage_words, pages, page_words, changes FROM search_statistics WHERE scope = ?", [scope])
      ).pipe(Effect.map((rows) => rows[0])),
    /** SQLite: how many passages the whole index holds. */
    indexedPassages: () => count("SELECT value AS n FROM search_counters WHERE name = 'passages'", []),
    /**
     * How many passages in `scope` hold `word` (its stem `stem`); on SQLite, when the scope holds
     * the whole index, read from the index's vocabulary instead of counted.
     */
    passageFrequency: (scope: string, word: string, stem: string, wholeIndex: boolean) =>
      dialect === "pg"
        ? count("SELECT count(*) AS n FROM passages t WHERE t.search @@ plainto_tsquery('svc_english', ?) AND t.scope_search @@ to_tsquery('simple', ?)", [
            word,
            scope
          ])
        : wholeIndex
          ? count("SELECT doc AS n FROM passages_vocab WHERE term = ?", [stem])
          : count("SELECT count(*) AS n FROM passages_fts WHERE passages_fts MATCH ?", [`{text}: (${matchExpression([word])}) AND {scope}: "${scope}"`]),
    /** How many of the organization's pages (folders aside) hold `word`, in the title or the body. */
    pageFrequency: (organizationId: string, word: string) =>
      dialect === "pg"
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
}

/** Search's statements (`searchIndexRepo`'s shape). */
export type SearchIndexRepo = ReturnType<typeof searchIndexRepo>
