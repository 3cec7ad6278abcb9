/**
 * The PostgreSQL form of search's first stage (the FTS5 queries of `service.ts`): each table's
 * words are a stored `tsvector` (migrations 0004 and 0005, config `svc_english`: English stemming,
 * no stop words) with a GIN index. Candidates are ordered BM25-like, negative like FTS5's `bm25()`
 * (lower is better): per query word, `ts_rank_cd` (the word's weighted frequency, normalized by the
 * text's length) times the word's IDF given by the caller (the organization's), summed per row.
 * The second stage (`bm25f.ts`) scores them for real.
 */
import { Effect } from "effect"
import type { Reads } from "../../platform/sql/read-connection.js"

/** A matching row: its `rowid` (passage id or `fts_key`) and score, best (lowest) first. */
export interface PgHit {
  readonly rowid: number
  readonly score: number
}

const query = "plainto_tsquery('svc_english', ?)"
const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ")

/** One searchable table: what a hit selects and how it is narrowed. */
interface Table {
  /** Selects `rowid` and a tie-break `key` from rows `t` (its `search` column) matching `q`. */
  readonly columns: string
  readonly from: string
  /** Extra conditions on `t`, with `?` parameters. */
  readonly where: string
  /** `ts_rank_cd`'s weights for D, C, B, A (pages: title A four times the body B). */
  readonly weights: string
}

const passages: (scope: string) => { table: Table; params: ReadonlyArray<unknown> } = (scope) => ({
  table: {
    columns: "t.id AS rowid, t.id AS key",
    from: "passages t",
    where: "t.scope_search @@ to_tsquery('simple', ?)",
    weights: "'{0.1, 0.2, 0.4, 1.0}'"
  },
  params: [scope]
})

/** Reads of hits on the pool, in the order and shape `service.ts` expects. */
export const pgSearchIndex = (reader: Reads) => {
  const hits = (text: string, params: ReadonlyArray<unknown>) =>
    Effect.orDie(reader.all<PgHit>(text, params)).pipe(Effect.map((rows) => rows.map((row) => ({ rowid: Number(row.rowid), score: Number(row.score) }))))

  /** Rows holding any of `terms`, ranked word by word with each word's IDF as its weight. */
  const ranked = (table: Table, params: ReadonlyArray<unknown>, terms: ReadonlyArray<string>, idfs: ReadonlyArray<number>, depth: number) => {
    const branch = `SELECT ${table.columns}, -CAST(ts_rank_cd(${table.weights}, t.search, q, 1) AS DOUBLE PRECISION) * CAST(? AS DOUBLE PRECISION) AS score
      FROM ${table.from}, ${query} AS q WHERE t.search @@ q AND ${table.where}`
    const text = `SELECT rowid, key, round(CAST(SUM(score) AS NUMERIC), 9) AS score
      FROM (${terms.map(() => branch).join(" UNION ALL ")}) AS hits GROUP BY rowid, key ORDER BY score, key LIMIT ?`
    return hits(text, [...terms.flatMap((term, i) => [idfs[i], term, ...params]), depth])
  }

  return {
    /** Passages in `scope` holding any of `terms`, ordered with the words' IDFs. */
    documents: (scope: string, terms: ReadonlyArray<string>, idfs: ReadonlyArray<number>, depth: number) => {
      const { table, params } = passages(scope)
      return ranked(table, params, terms, idfs, depth)
    },
    /** Passages in `scope` holding any of `terms`, unranked (every score 0), in index order. */
    documentsUnranked: (scope: string, terms: ReadonlyArray<string>, depth: number) =>
      hits(
        `SELECT t.id AS rowid, 0 AS score FROM passages t
         WHERE t.search @@ (${terms.map(() => query).join(" || ")}) AND t.scope_search @@ to_tsquery('simple', ?) ORDER BY t.id LIMIT ?`,
        [...terms, scope, depth]
      ),
    /** Pages (not folders) of the Knowledgebases holding any of `terms`. */
    pages: (knowledgebaseIds: ReadonlyArray<string>, terms: ReadonlyArray<string>, idfs: ReadonlyArray<number>, depth: number) =>
      Effect.suspend(() => {
        const table: Table = {
          columns: "t.fts_key AS rowid, t.id AS key",
          from: "pages t",
          where: `t.knowledgebase_id IN (${placeholders(knowledgebaseIds.length)}) AND t.template_key != 'folder'`,
          weights: "'{0.1, 0.2, 0.25, 1.0}'"
        }
        return ranked(table, knowledgebaseIds, terms, idfs, depth)
      }),
    /** The member's memories holding any of `terms`. */
    memories: (memberId: string, terms: ReadonlyArray<string>, idfs: ReadonlyArray<number>, depth: number) =>
      Effect.suspend(() => {
        const table: Table = { columns: "t.fts_key AS rowid, t.id AS key", from: "memories t", where: "t.member_id = ?", weights: "'{0.1, 0.2, 0.4, 1.0}'" }
        return ranked(table, [memberId], terms, idfs, depth)
      })
  }
}
