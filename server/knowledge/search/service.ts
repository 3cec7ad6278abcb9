/**
 * Knowledgebase search: documents (indexed passages of ready, enabled sources), pages and, for a
 * personal key, the member's own memories. Two stages: the index finds candidates (SQLite FTS5 on
 * the read connection; on PostgreSQL its tsvector form, `pg-index-repo.ts`; every statement in `repo.ts`), then `bm25f.ts` scores them
 * again with the organization's own statistics (`statistics.ts`), documents and pages on one scale,
 * a document's name weighing in every passage, English stop words never deciding, and
 * pseudo-relevance feedback. Documents collapse to their best passage unless `collapse: false`.
 * With an embedding model configured (`VectorSearch`), the passages nearest the query's vector
 * join by reciprocal rank fusion. Snippets and a citation on every hit. One credit per call that searches documents, charged only
 * after the search succeeded; recorded in the key's activity (query as a fingerprint).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { organizationCreditsLeft, takeOrganizationCreditTx } from "../../identity/credit-repo.js"
import type { Principal } from "../../identity/domain.js"
import { InsufficientCredits, InvalidRequest, NotFound } from "../../platform/errors.js"
import { Cursors } from "../../platform/pagination.js"
import { DatabaseBackend } from "../../platform/sql/dialect.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import { ActivityLog } from "../activity/service.js"
import { reciprocalRankFusion } from "../embeddings/fusion.js"
import { VectorSearch } from "../embeddings/vector-search.js"
import { KnowledgebaseRepo } from "../knowledgebases/repo.js"
import { rankingTerms, stemOf } from "./analyzer.js"
import { type Analyzed, analyze, type Candidate, type CandidateKind, expandedQuery, expansionTerms, feedback, idf, score, type Statistics, type WeightedQuery, withCounts } from "./bm25f.js"
import type { SearchKind, SearchRequest, SearchResult } from "./domain.js"
import { pgSearchIndex } from "./pg-index-repo.js"
import { type PassageRow, searchIndexRepo } from "./repo.js"
import { queryMatcher, queryTerms, queryWords } from "./query.js"
import { knowledgebaseScope, organizationScope } from "./scope.js"
import { searchStatistics } from "./statistics.js"

/** How deep paging through one query may go. */
export const maxSearchDepth = 1_000
const defaultLimit = 50
/** The fewest candidates the index hands the second stage, of each kind (no fewer than a page of 10 needs: see `limit`)… */
const candidateFloor = 50
/** …and the most (deep pages of collapsed documents need several passages per hit). */
const candidateCeiling = 3_000
/** How many more candidates than needed the index ranks before they are narrowed to the scope. */
const widening = 3
/** A word is common (see `matchPlan`) when more than this share of the organization's passages and pages hold it… */
const commonWordShare = 0.2
/** …and more than this many. */
const commonWordMinimum = 5_000

/** A candidate with what scoring it needs and what its hit shows. */
interface Scored {
  readonly kind: CandidateKind
  readonly candidate: Candidate
  /** The candidate's counts of the words scored so far (the query's, then feedback's). */
  analyzed: Analyzed
  readonly group: string
  readonly result: Omit<SearchResult, "score" | "snippet">
  /** The text its snippet is cut from (only the hits shown are cut, and only they ask). */
  readonly excerptOf: () => string
  score: number
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
/** The tie-break of equal scores: passages by number, pages and memories by id. */
const compareIds = (a: Scored, b: Scored) =>
  a.kind === "document" && b.kind === "document" ? Number(a.result.id) - Number(b.result.id) : compareText(a.result.id, b.result.id)
const byScore = (a: Scored, b: Scored) => b.score - a.score || compareText(a.kind, b.kind) || compareIds(a, b)
const round = (value: number) => Math.round(value * 10_000) / 10_000

/** The best of each group (a document's passages), best first. */
const collapsed = (items: ReadonlyArray<Scored>): Array<Scored> => {
  const seen = new Set<string>()
  return items.filter((item) => (seen.has(item.group) ? false : (seen.add(item.group), true)))
}

/** Search over a Knowledgebase (or `all`) for a calling principal. */
export class SearchService extends Effect.Service<SearchService>()("svc/SearchService", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection
    const sql = yield* SqlClient.SqlClient
    const knowledgebases = yield* KnowledgebaseRepo
    const cursors = yield* Cursors
    const activity = yield* ActivityLog
    const dialect = (yield* DatabaseBackend).dialect
    const pg = dialect === "pg" ? pgSearchIndex(reader) : null
    const index = searchIndexRepo(reader, dialect)
    const statistics = searchStatistics(index, dialect)
    const vectors = yield* VectorSearch

    /**
     * Which words find the candidates: a cutoff frequency, as Elasticsearch's common terms query.
     * A word held by over a fifth of the organization's passages and pages (and by more than
     * {@link commonWordMinimum}) says little about relevance but would make the index read most
     * of itself; when the query has rarer words, those alone find candidates (the common ones
     * still score them). A query of only common words finds its candidates in index order.
     */
    const matchPlan = (words: ReadonlyArray<string>, frequencies: ReadonlyMap<string, number>, units: number, limit: number) => {
      const cutoff = Math.max(commonWordMinimum, units * commonWordShare)
      const kept = words.filter((word) => (frequencies.get(stemOf(word)) ?? 0) <= cutoff)
      if (kept.length === 0) return { words, ordered: false }
      // When every match fits in the candidates, the index need not order them.
      const matches = kept.reduce((sum, word) => sum + (frequencies.get(stemOf(word)) ?? 0), 0)
      return { words: kept, ordered: matches > limit }
    }

    /** Passages by id, of ready and enabled documents only (the status is checked again on candidates). */
    const passageRows = index.passagesByIds

    /**
     * The passages in `scope` holding a word, at most `limit`. Unordered (every match fits, or only
     * common words), the scope token is ANDed into the FTS5 query. Ordered, FTS5's `bm25()` would
     * count every row holding the scope token to weigh it (about 3.5 ms for a Knowledgebase of
     * 100,000 passages, whatever the words), so the words are ranked alone, three times as many as
     * needed, and kept when in scope; only when too few are in scope (a small part of a large
     * index) does the scoped query run.
     */
    const passageCandidates = (scope: string, words: ReadonlyArray<string>, ordered: boolean, idfs: ReadonlyArray<number>, limit: number) =>
      Effect.gen(function* () {
        if (pg !== null) {
          const hits = yield* ordered ? pg.documents(scope, words, idfs, limit) : pg.documentsUnranked(scope, words, limit)
          return yield* passageRows(hits.map((hit) => hit.rowid))
        }
        const scoped = (ranked: boolean) => Effect.flatMap(index.scopedPassageIds(scope, words, ranked, limit), passageRows)
        if (!ordered) return yield* scoped(false)
        const widened = limit * widening
        const ranked = yield* index.rankedPassageIds(words, widened)
        const token = ` ${scope} `
        const inScope = (row: { readonly scope: string }) => ` ${row.scope} `.includes(token)
        // The best `limit` are read whole with their scopes: in a Knowledgebase holding most of the
        // index, they are the answer, and no second read is needed.
        const first = (yield* index.passagesWithScopes(ranked.slice(0, limit))).filter(inScope)
        const searchable = first.filter((row) => Number(row.searchable) === 1)
        if (first.length === limit || ranked.length <= limit) return searchable
        const scopes = yield* index.passageScopes(ranked.slice(limit))
        const laterInScope = new Set(scopes.filter(inScope).map((row) => Number(row.id)))
        const more = ranked.slice(limit).filter((id) => laterInScope.has(id)).slice(0, limit - first.length)
        return first.length + more.length >= limit || ranked.length < widened ? [...searchable, ...(yield* passageRows(more))] : yield* scoped(true)
      })

    const pageCandidates = (knowledgebaseIds: ReadonlyArray<string>, words: ReadonlyArray<string>, idfs: ReadonlyArray<number>, limit: number) =>
      Effect.gen(function* () {
        if (knowledgebaseIds.length === 0) return []
        const found = pg !== null ? (yield* pg.pages(knowledgebaseIds, words, idfs, limit)).map((hit) => hit.rowid) : yield* index.pageCandidateKeys(knowledgebaseIds, words, limit)
        return yield* index.pagesByKeys(found)
      })

    /** The member's memories holding a word, with the statistics of the member's memories. */
    const memoryCandidates = (memberId: string, words: ReadonlyArray<string>, limit: number) =>
      Effect.gen(function* () {
        const totals = yield* index.memoryTotals(memberId)
        const units = totals.units
        const frequencies = yield* Effect.forEach(words, (word) => index.memoryFrequency(memberId, word))
        const idfs = frequencies.map((frequency) => idf(units, frequency))
        const found = pg !== null ? (yield* pg.memories(memberId, words, idfs, limit)).map((hit) => hit.rowid) : yield* index.memoryCandidateKeys(memberId, words, limit)
        const rows = yield* index.memoriesByKeys(found)
        return {
          rows,
          statistics: { units, averageLength: () => (units > 0 ? totals.words / units : 1) } satisfies Statistics,
          query: words.map((word, i) => ({ stem: stemOf(word), weight: 1, idf: idfs[i]! })) satisfies WeightedQuery
        }
      })

    /** Takes one credit if the organization has one left; false when it has none. */
    const statements = statementsOn(sql)
    const charge = (organizationId: string) => statements(takeOrganizationCreditTx(organizationId))
    const creditsLeft = (organizationId: string) => organizationCreditsLeft(reader, organizationId)
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
          const words = rankingTerms(terms)
          const matcher = queryMatcher(terms)
          const stems = [...new Set(words.map(stemOf))]
          let scope: string | null = null
          let scopeIds: ReadonlyArray<string>
          if (knowledgebaseId === "all") {
            scopeIds = yield* knowledgebases.idsOf(organizationId)
          } else {
            const kb = yield* knowledgebases.byId(organizationId, knowledgebaseId)
            if (!kb) return yield* new NotFound({ message: `No Knowledgebase '${knowledgebaseId}' in this organization.` })
            scope = kb.id
            scopeIds = [kb.id]
          }
          const searchesDocuments = kinds.includes("documents")
          const billed = searchesDocuments && options.billed !== false
          if (billed && (yield* creditsLeft(organizationId)) <= 0) return yield* noCredits()
          const collapse = request.collapse ?? true

          const list = `search:${organizationId}:${knowledgebaseId}:${actor.key.id}:${kinds.join(",")}:${collapse}:${terms.join(" ")}`
          const page = yield* cursors.request(list, { limit: request.limit ?? defaultLimit, cursor: request.cursor })
          const offset = page.after === null ? 0 : Number(page.after[0])
          const depth = Math.min(maxSearchDepth, offset + page.limit + 1)
          const limit = Math.min(candidateCeiling, Math.max(candidateFloor, depth * 2))

          const orgScope = organizationScope(organizationId)
          const organization = yield* statistics.organization(orgScope)
          const units = organization.passages + organization.pages
          const frequencies = yield* statistics.frequencies(orgScope, organizationId, organization, stems)
          const idfOf = (stem: string, known: ReadonlyMap<string, number> = frequencies) => idf(units, known.get(stem) ?? 0)
          const plan = matchPlan(words, frequencies, units, limit)
          const planIdfs = plan.words.map((word) => idfOf(stemOf(word)))
          const organizationStatistics: Statistics = {
            units,
            averageLength: (kind) =>
              kind === "page"
                ? organization.pages > 0 ? organization.pageWords / organization.pages : 1
                : organization.passages > 0 ? organization.passageWords / organization.passages : 1
          }

          const queryStems: ReadonlySet<string> = new Set(stems)
          /** A candidate read for the query's words only (feedback reads the best ones whole). */
          const scored = (item: Omit<Scored, "analyzed">): Scored => ({ ...item, analyzed: analyze(item.candidate, queryStems) })
          const documentItem = (row: PassageRow): Scored => scored({
            kind: "document",
            candidate: { kind: "document", title: row.section ? `${row.name} ${row.section}` : row.name, body: row.text },
            group: collapse ? `source:${row.source_id}` : `passage:${row.id}`,
            excerptOf: () => row.text,
            score: 0,
            result: {
              kind: "document",
              id: String(row.id),
              title: row.name,
              citation: {
                kind: "document",
                knowledgebaseId: scope ?? row.knowledgebase_id,
                sourceId: row.source_id,
                sourceName: row.name,
                passageId: String(row.id),
                section: row.section
              }
            }
          })
          const items: Array<Scored> = []
          if (searchesDocuments) {
            const rows = yield* passageCandidates(scope === null ? orgScope : knowledgebaseScope(scope), plan.words, plan.ordered, planIdfs, limit)
            for (const row of rows) items.push(documentItem(row))
          }
          if (kinds.includes("pages")) {
            for (const row of yield* pageCandidates(scopeIds, plan.words, planIdfs, limit)) {
              items.push(scored({
                kind: "page",
                candidate: { kind: "page", title: row.title, body: row.markdown },
                group: `page:${row.id}`,
                excerptOf: () => (matcher.mentions(row.markdown) ? row.markdown : row.title),
                score: 0,
                result: {
                  kind: "page",
                  id: row.id,
                  title: row.title,
                  citation: { kind: "page", knowledgebaseId: row.knowledgebase_id, pageId: row.id, title: row.title }
                }
              }))
            }
          }
          // A word the query repeats weighs as often (as a query parser's clause per occurrence).
          const occurrences = new Map<string, number>()
          for (const word of queryWords(request.query)) {
            const stem = stemOf(word)
            occurrences.set(stem, (occurrences.get(stem) ?? 0) + 1)
          }
          const query: WeightedQuery = stems.map((stem) => ({ stem, weight: occurrences.get(stem) ?? 1, idf: idfOf(stem) }))
          let used = query
          for (const item of items) item.score = score(item.analyzed, item.kind, query, organizationStatistics)
          items.sort(byScore)
          const groups = collapsed(items)
          const best = groups.length >= feedback.minimumHits ? groups.slice(0, feedback.documents).filter((item) => item.score > 0) : []
          const expansion = expansionTerms(
            best.map((item) => ({ analyzed: analyze(item.candidate), score: item.score })),
            queryStems
          )
          if (expansion.length > 0) {
            const expansionStems = expansion.map((term) => term.stem)
            const more =
              organization.passages > 0
                ? yield* statistics.estimatedFrequencies(orgScope, organizationId, organization, expansionStems)
                : yield* statistics.frequencies(orgScope, organizationId, organization, expansionStems)
            used = expandedQuery(query, expansion, (stem) => idfOf(stem, more))
            const expansionSet = new Set(expansionStems)
            for (const item of items) {
              item.analyzed = withCounts(item.analyzed, item.candidate, expansionSet)
              item.score = score(item.analyzed, item.kind, used, organizationStatistics)
            }
          }
          if (kinds.includes("memories") && personal) {
            const memories = yield* memoryCandidates(actor.member!.id, words, limit)
            const share = used === query ? 1 : feedback.originalWeight / query.length
            for (const row of memories.rows) {
              const candidate: Candidate = { kind: "memory", title: "", body: row.text }
              const analyzed = analyze(candidate, queryStems)
              items.push({
                kind: "memory",
                candidate,
                analyzed,
                group: `memory:${row.id}`,
                excerptOf: () => row.text,
                score: share * score(analyzed, "memory", memories.query, memories.statistics),
                result: {
                  kind: "memory",
                  id: row.id,
                  title: row.text.slice(0, 80),
                  citation: { kind: "memory", knowledgebaseId: null, memoryId: row.id }
                }
              })
            }
          }
          items.sort(byScore)
          let ranked = collapsed(items)
          const retrieval = vectors.mode
          if (retrieval === "hybrid" && searchesDocuments) {
            // Only passages whose vectors lean towards the query's (cosine above 0) count as near.
            const near = (yield* vectors.nearestPassages(organizationId, scope, request.query, limit)).filter((hit) => hit.similarity > 0)
            const known = new Map(items.filter((item) => item.kind === "document").map((item) => [item.result.id, item]))
            for (const row of yield* passageRows(near.map((hit) => hit.passageId).filter((id) => !known.has(String(id))))) {
              known.set(String(row.id), documentItem(row))
            }
            const nearest = near.flatMap((hit) => known.get(String(hit.passageId)) ?? [])
            const byGroup = new Map(ranked.map((item) => [item.group, item]))
            for (const item of nearest) if (!byGroup.has(item.group)) byGroup.set(item.group, item)
            const fused = reciprocalRankFusion([ranked.map((item) => item.group), nearest.map((item) => item.group)])
            for (const item of byGroup.values()) item.score = fused.get(item.group) ?? 0
            ranked = [...byGroup.values()].sort(byScore)
          }
          const found = ranked.slice(0, maxSearchDepth)
          const pageItems: Array<SearchResult> = found.slice(offset, offset + page.limit).map((item) => ({
            ...item.result,
            snippet: matcher.snippet(item.excerptOf()),
            score: round(item.score)
          }))
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
            creditsCharged: billed ? 1 : 0,
            retrieval
          }
        })
    }
  }),
  dependencies: [ReadConnection.Default, KnowledgebaseRepo.Default, Cursors.Default, ActivityLog.Default, VectorSearch.Default]
}) {}
