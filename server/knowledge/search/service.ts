/**
 * Knowledgebase search: documents (indexed passages of ready, enabled sources), pages and, for a
 * personal key, the member's own memories; BM25 over SQLite FTS5 on the read connection (on
 * PostgreSQL its tsvector form, `pg-index.ts`), merged by score, with snippets and a citation on every hit. One credit per call that searches documents,
 * charged only after the search succeeded; recorded in the key's activity (query as a fingerprint).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../platform/accounts/domain.js"
import { InsufficientCredits, InvalidRequest, NotFound } from "../../platform/errors.js"
import { Cursors } from "../../platform/pagination.js"
import { DatabaseBackend } from "../../platform/sql/dialect.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { ActivityLog } from "../activity/service.js"
import { KnowledgebaseRepo } from "../knowledgebases/repo.js"
import type { SearchKind, SearchRequest, SearchResult } from "./domain.js"
import { pgSearchIndex } from "./pg-index.js"
import { matchExpression, mentionsAny, queryTerms, snippetOf, stemOf } from "./query.js"
import { ftsRowCount, idfRescaling, perWordRanking } from "./rank.js"
import { knowledgebaseScope, organizationScope } from "./scope.js"

/** How deep paging through one query may go. */
export const maxSearchDepth = 1_000
const defaultLimit = 50
/** A word is common (see `rankingPlan`) when more than this share of the passages hold it… */
const commonWordShare = 0.2
/** …and more than this many. */
const commonWordMinimum = 5_000
const frequencyTtlMs = 60_000
const frequenciesKept = 10_000

interface Hit {
  readonly rowid: number
  readonly score: number
}
interface PassageRow {
  readonly id: number
  readonly source_id: string
  readonly section: string | null
  readonly text: string
  readonly name: string
  readonly knowledgebase_id: string
}
interface PageRow {
  readonly id: string
  readonly knowledgebase_id: string
  readonly title: string
  readonly markdown: string
}
interface MemoryRow {
  readonly id: string
  readonly text: string
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
/** The same order as the queries' tie-break: passages by number, pages and memories by id. */
const compareIds = (a: SearchResult, b: SearchResult) => (a.kind === "document" ? Number(a.id) - Number(b.id) : compareText(a.id, b.id))
const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ")
const round = (score: number) => Math.round(-score * 10_000) / 10_000

/** Search over a Knowledgebase (or `all`) for a calling principal. */
export class SearchService extends Effect.Service<SearchService>()("svc/SearchService", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection
    const sql = yield* SqlClient.SqlClient
    const knowledgebases = yield* KnowledgebaseRepo
    const cursors = yield* Cursors
    const activity = yield* ActivityLog
    const pg = (yield* DatabaseBackend).dialect === "pg" ? pgSearchIndex(reader) : null

    const hits = (text: string, params: ReadonlyArray<unknown>) => Effect.orDie(reader.all<Hit>(text, params))
    const count = (text: string, params: ReadonlyArray<unknown>) =>
      Effect.orDie(reader.all<{ n: number }>(text, params)).pipe(Effect.map((rows) => rows[0]?.n ?? 0))
    /** `N` of an FTS5 table's BM25, from its averages record. */
    const rowsOf = (table: "pages_fts" | "memories_fts") =>
      Effect.orDie(reader.all<{ block: Uint8Array }>(`SELECT block FROM ${table}_data WHERE id = 1`, [])).pipe(
        Effect.map((rows) => ftsRowCount(rows[0]?.block))
      )
    /** How many rows of an FTS5 table hold each word (`n` of its BM25), as FTS5 counts them. */
    const frequenciesIn = (table: "pages_fts" | "memories_fts", terms: ReadonlyArray<string>) =>
      Effect.forEach(terms, (term) => count(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`, [matchExpression([term])]))

    /**
     * Hits of `select` (naming `rowid`, a tie-break `key` and a BM25 `score`; its MATCH expression
     * first among its parameters, `params` after) for the query's words, best first: one FTS5
     * query for all of them, or word by word with a positive IDF when a word is common in the
     * table (see rank.ts).
     */
    const rankedHits = (
      select: string,
      params: ReadonlyArray<unknown>,
      terms: ReadonlyArray<string>,
      matchOf: (terms: ReadonlyArray<string>) => string,
      table: { readonly rows: number; readonly frequencies: ReadonlyArray<number> },
      depth: number
    ) => {
      const weights = idfRescaling(table.rows, table.frequencies)
      if (weights === null || terms.length === 1) {
        const weight = weights?.[0] ?? 1
        return Effect.map(hits(`${select} ORDER BY score, key LIMIT ?`, [matchOf(terms), ...params, depth]), (found) =>
          weight === 1 ? found : found.map((hit) => ({ rowid: hit.rowid, score: hit.score * weight }))
        )
      }
      return hits(perWordRanking(select, terms.length), [...terms.flatMap((term, i) => [weights[i], matchOf([term]), ...params]), depth])
    }
    const rowsByRowid = <Row>(text: string, ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.succeed([] as ReadonlyArray<Row & { rowid: number }>) : Effect.orDie(reader.all<Row & { rowid: number }>(text, ids))

    /** Document frequencies of stems (for skipping words most passages hold), kept a minute. */
    const frequencies = new Map<string, { df: number; at: number }>()
    const frequencyOf = (term: string, fresh = false) =>
      Effect.gen(function* () {
        const stem = stemOf(term)
        const cached = frequencies.get(stem)
        if (cached && !fresh && Date.now() - cached.at < frequencyTtlMs) return cached.df
        const df =
          pg !== null
            ? yield* pg.passageFrequency(term)
            : ((yield* Effect.orDie(reader.all<{ doc: number }>("SELECT doc FROM passages_vocab WHERE term = ?", [stem])))[0]?.doc ?? 0)
        if (frequencies.size >= frequenciesKept) frequencies.clear()
        frequencies.set(stem, { df, at: Date.now() })
        return df
      })

    /**
     * Which words rank the passages: a cutoff frequency, as Elasticsearch's common terms query. In
     * a large index, a word held by over a fifth of the passages (and by more than
     * {@link commonWordMinimum}) says little about relevance but makes the ranking score most of the
     * index. When the query has rarer words, those alone match and rank; a query of only common
     * words is answered in index order (their BM25 weights being near zero), every score 0.
     */
    const rankingPlan = (terms: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const total = (yield* Effect.orDie(reader.all<{ value: number }>("SELECT value FROM search_counters WHERE name = 'passages'", [])))[0]?.value ?? 0
        const cutoff = Math.max(commonWordMinimum, total * commonWordShare)
        if (total <= cutoff) {
          return { terms, ranked: true, total, frequencies: yield* Effect.forEach(terms, (term) => frequencyOf(term, true)) }
        }
        const kept: Array<string> = []
        const frequencies: Array<number> = []
        for (const term of terms) {
          const df = yield* frequencyOf(term)
          if (df <= cutoff) {
            kept.push(term)
            frequencies.push(df)
          }
        }
        return kept.length > 0 ? { terms: kept, ranked: true, total, frequencies } : { terms, ranked: false, total, frequencies: [] }
      })

    const documentHits = (organizationId: string, knowledgebaseId: string | null, terms: ReadonlyArray<string>, depth: number) =>
      Effect.gen(function* () {
        const plan = yield* rankingPlan(terms)
        const scope = knowledgebaseId === null ? organizationScope(organizationId) : knowledgebaseScope(knowledgebaseId)
        const matchOf = (words: ReadonlyArray<string>) => `{text}: (${matchExpression(words)}) AND {scope}: "${scope}"`
        const found = pg !== null
          ? plan.ranked
            ? yield* pg.documents(scope, plan.terms, plan.frequencies, plan.total, depth)
            : yield* pg.documentsUnranked(scope, plan.terms, depth)
          : plan.ranked
          ? yield* rankedHits(
              "SELECT rowid, rowid AS key, bm25(passages_fts, 1.0, 0.0) AS score FROM passages_fts WHERE passages_fts MATCH ?",
              [],
              plan.terms,
              matchOf,
              { rows: plan.total, frequencies: plan.frequencies },
              depth
            )
          : yield* hits("SELECT rowid, 0 AS score FROM passages_fts WHERE passages_fts MATCH ? ORDER BY rowid LIMIT ?", [matchOf(plan.terms), depth])
        // Passages exist only for ready documents; the status is checked again on the few hits.
        const rows = yield* rowsByRowid<PassageRow>(
          `SELECT p.id AS rowid, p.id, p.source_id, p.section, p.text, s.name, s.knowledgebase_id
           FROM passages p JOIN sources s ON s.id = p.source_id
           WHERE p.id IN (${placeholders(found.length)}) AND s.status = 'ready' AND s.disabled = 0`,
          found.map((hit) => hit.rowid)
        )
        const byId = new Map(rows.map((row) => [row.rowid, row]))
        return found.flatMap((hit) => {
          const row = byId.get(hit.rowid)
          return row ? [{ score: hit.score, row }] : []
        })
      })

    const pageHits = (knowledgebaseIds: ReadonlyArray<string>, terms: ReadonlyArray<string>, depth: number) =>
      Effect.gen(function* () {
        if (knowledgebaseIds.length === 0) return []
        const found = pg !== null ? yield* pg.pages(knowledgebaseIds, terms, depth) : yield* rankedHits(
          `SELECT f.rowid AS rowid, p.id AS key, bm25(pages_fts, 4.0, 1.0) AS score FROM pages_fts f JOIN pages p ON p.fts_key = f.rowid
           WHERE pages_fts MATCH ? AND p.knowledgebase_id IN (${placeholders(knowledgebaseIds.length)}) AND p.template_key != 'folder'`,
          knowledgebaseIds,
          terms,
          matchExpression,
          { rows: yield* rowsOf("pages_fts"), frequencies: yield* frequenciesIn("pages_fts", terms) },
          depth
        )
        const rows = yield* rowsByRowid<PageRow>(
          `SELECT fts_key AS rowid, id, knowledgebase_id, title, markdown FROM pages WHERE fts_key IN (${placeholders(found.length)})`,
          found.map((hit) => hit.rowid)
        )
        const byId = new Map(rows.map((row) => [row.rowid, row]))
        return found.flatMap((hit) => {
          const row = byId.get(hit.rowid)
          return row ? [{ score: hit.score, row }] : []
        })
      })

    const memoryHits = (memberId: string, terms: ReadonlyArray<string>, depth: number) =>
      Effect.gen(function* () {
        const found = pg !== null ? yield* pg.memories(memberId, terms, depth) : yield* rankedHits(
          `SELECT f.rowid AS rowid, m.id AS key, bm25(memories_fts) AS score FROM memories_fts f JOIN memories m ON m.fts_key = f.rowid
           WHERE memories_fts MATCH ? AND m.member_id = ?`,
          [memberId],
          terms,
          matchExpression,
          { rows: yield* rowsOf("memories_fts"), frequencies: yield* frequenciesIn("memories_fts", terms) },
          depth
        )
        const rows = yield* rowsByRowid<MemoryRow>(
          `SELECT fts_key AS rowid, id, text FROM memories WHERE fts_key IN (${placeholders(found.length)})`,
          found.map((hit) => hit.rowid)
        )
        const byId = new Map(rows.map((row) => [row.rowid, row]))
        return found.flatMap((hit) => {
          const row = byId.get(hit.rowid)
          return row ? [{ score: hit.score, row }] : []
        })
      })

    /** Takes one credit if the organization has one left; false when it has none. */
    const charge = (organizationId: string) =>
      Effect.orDie(
        sql<{ credits_remaining: number }>`UPDATE organizations SET credits_remaining = credits_remaining - 1, credits_used = credits_used + 1
          WHERE id = ${organizationId} AND credits_remaining > 0 RETURNING credits_remaining`.pipe(Effect.map((rows) => rows.length === 1))
      )
    const creditsLeft = (organizationId: string) =>
      Effect.orDie(
        reader
          .all<{ credits_remaining: number }>("SELECT credits_remaining FROM organizations WHERE id = ?", [organizationId])
          .pipe(Effect.map((rows) => rows[0]?.credits_remaining ?? 0))
      )
    const noCredits = () =>
      new InsufficientCredits({ message: "This organization has no credits left; searching documents costs one credit. Nothing was charged." })

    return {
      /**
       * Searches `knowledgebaseId` (or `all`) for the principal. With `billed: false` (a search
       * made by a run, which pays its one credit itself) documents are searched without a credit.
       */
      search: (actor: Principal, knowledgebaseId: string, request: SearchRequest, options: { readonly billed?: boolean } = {}) =>
        Effect.gen(function* () {
          const organizationId = actor.organization.id
          const personal = actor.key.kind === "personal" && actor.member !== null
          const asked: ReadonlyArray<SearchKind> = request.kinds ?? (personal ? ["documents", "pages", "memories"] : ["documents", "pages"])
          const kinds = [...new Set(asked)]
          const terms = queryTerms(request.query)
          if (terms.length === 0) return yield* new InvalidRequest({ message: "query: give at least one word to search for." })
          let scope: string | null = null
          let scopeIds: ReadonlyArray<string>
          if (knowledgebaseId === "all") {
            scopeIds = yield* Effect.orDie(
              reader
                .all<{ id: string }>("SELECT id FROM knowledgebases WHERE organization_id = ?", [organizationId])
                .pipe(Effect.map((rows) => rows.map((row) => row.id)))
            )
          } else {
            const kb = yield* knowledgebases.byId(organizationId, knowledgebaseId)
            if (!kb) return yield* new NotFound({ message: `No Knowledgebase '${knowledgebaseId}' in this organization.` })
            scope = kb.id
            scopeIds = [kb.id]
          }
          const searchesDocuments = kinds.includes("documents")
          const billed = searchesDocuments && options.billed !== false
          if (billed && (yield* creditsLeft(organizationId)) <= 0) return yield* noCredits()

          const list = `search:${organizationId}:${knowledgebaseId}:${actor.key.id}:${kinds.join(",")}:${terms.join(" ")}`
          const page = yield* cursors.request(list, { limit: request.limit ?? defaultLimit, cursor: request.cursor })
          const offset = page.after === null ? 0 : Number(page.after[0])
          const depth = Math.min(maxSearchDepth, offset + page.limit + 1)

          const found: Array<SearchResult & { rank: number }> = []
          if (searchesDocuments) {
            for (const { score, row } of yield* documentHits(organizationId, scope, terms, depth)) {
              found.push({
                rank: score,
                kind: "document",
                id: String(row.id),
                title: row.name,
                snippet: snippetOf(row.text, terms),
                score: round(score),
                citation: {
                  kind: "document",
                  knowledgebaseId: scope ?? row.knowledgebase_id,
                  sourceId: row.source_id,
                  sourceName: row.name,
                  passageId: String(row.id),
                  section: row.section
                }
              })
            }
          }
          if (kinds.includes("pages")) {
            for (const { score, row } of yield* pageHits(scopeIds, terms, depth)) {
              found.push({
                rank: score,
                kind: "page",
                id: row.id,
                title: row.title,
                snippet: snippetOf(mentionsAny(row.markdown, terms) ? row.markdown : row.title, terms),
                score: round(score),
                citation: { kind: "page", knowledgebaseId: row.knowledgebase_id, pageId: row.id, title: row.title }
              })
            }
          }
          if (kinds.includes("memories") && personal) {
            for (const { score, row } of yield* memoryHits(actor.member!.id, terms, depth)) {
              found.push({
                rank: score,
                kind: "memory",
                id: row.id,
                title: row.text.slice(0, 80),
                snippet: snippetOf(row.text, terms),
                score: round(score),
                citation: { kind: "memory", knowledgebaseId: null, memoryId: row.id }
              })
            }
          }
          found.sort((a, b) => a.rank - b.rank || compareText(a.kind, b.kind) || compareIds(a, b))
          const pageItems = found.slice(offset, offset + page.limit).map(({ rank: _rank, ...result }) => result)
          const more = found.length > offset + page.limit && offset + page.limit < maxSearchDepth
          const recorded = activity.record(actor, {
            action: "search",
            knowledgebaseId: scope,
            query: request.query,
            kinds,
            results: pageItems.map((result) => ({ kind: result.kind, id: result.citation.sourceId ?? result.id, title: result.title }))
          })
          if (billed && !(yield* charge(organizationId))) return yield* noCredits()
          yield* recorded
          return {
            results: pageItems,
            nextCursor: more ? cursors.encode(list, [offset + page.limit]) : null,
            kinds,
            creditsCharged: billed ? 1 : 0
          }
        })
    }
  }),
  dependencies: [ReadConnection.Default, KnowledgebaseRepo.Default, Cursors.Default, ActivityLog.Default]
}) {}
