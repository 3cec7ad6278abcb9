/**
 * Where the time of a document search goes, straight on SQLite (better-sqlite3), on a copy of the
 * database a sources benchmark run kept (`node dist/bench/sources.js --keep-data`):
 *
 *   node dist/bench/sources-sql.js --db /tmp/svc-bench-sources-XXXX/svc.sqlite [--queries 20] [--reps 3]
 *
 * The copy is made in a temporary directory and removed at the end; the kept database is never
 * written. For the query classes of the benchmark (same vocabulary, same seeds) it times, per
 * query (median and p99 over queries × repetitions):
 *
 * - the server's first document search (`server/knowledge/search/service.ts` at commit ccd8d8f): the hit query with
 *   its joins, then the rows and snippets of the top hits;
 * - the floors: counting the matches, and BM25 over the FTS5 table alone;
 * - rewrites that keep the answer: ranking on the FTS5 table alone and filtering only the top
 *   candidates (widening when too few pass), and dropping OR terms whose BM25 weight is clamped to
 *   ~0 anyway (present in at least half the passages) when the query has other terms;
 * - rewrites that change some answers: dropping terms in a quarter of the passages or more, and
 *   ranking queries made only of such words on their newest 5,000 matches;
 * - settings: `mmap_size`, a covering (id, source_id) index, the FTS5 'optimize' merge, and an
 *   FTS5 table with `detail=column`.
 *
 * Prints a table and writes bench/results/sources-sql-latest.json.
 */
import Database from "better-sqlite3"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { matchExpression, queryTerms, snippetOf } from "../server/knowledge/search/query.js"
import { fmt, table } from "./report.js"
import { type Band, corpus, queries } from "./sources-corpus.js"

const here = dirname(fileURLToPath(import.meta.url))
const resultsDir = join(resolve(here, "../.."), "bench", "results")

const { values: flags } = parseArgs({
  options: {
    db: { type: "string" },
    queries: { type: "string", default: "20" },
    reps: { type: "string", default: "3" },
    limit: { type: "string", default: "10" }
  }
})
if (!flags.db || !existsSync(flags.db)) {
  console.error("--db <svc.sqlite of a run kept with --keep-data> is required")
  process.exit(2)
}
const perClass = Number(flags.queries)
const reps = Number(flags.reps)
const limit = Number(flags.limit)
const depth = limit + 1

const workDir = mkdtempSync(join(tmpdir(), "svc-sources-sql-"))
const file = join(workDir, "svc.sqlite")
copyFileSync(flags.db, file)
if (existsSync(`${flags.db}-wal`)) copyFileSync(`${flags.db}-wal`, `${file}-wal`)
process.on("exit", () => rmSync(workDir, { recursive: true, force: true }))

const db = new Database(file)
db.pragma("journal_mode = WAL")
// the server's read connection: default cache (2 MB), no mmap
const corpusKb = db
  .prepare(
    `SELECT ks.knowledgebase_id FROM knowledgebase_sources ks JOIN passages p ON p.source_id = ks.source_id
     GROUP BY ks.knowledgebase_id ORDER BY count(*) DESC LIMIT 1`
  )
  .pluck()
  .get() as string
const organizationId = db.prepare("SELECT organization_id FROM knowledgebases WHERE id = ?").pluck().get(corpusKb) as string
const totalPassages = db.prepare("SELECT count(*) FROM passages").pluck().get() as number
console.log(`database copy: ${(statSync(file).size / 1e6).toFixed(0)} MB, ${totalPassages.toLocaleString("en")} passages; corpus Knowledgebase ${corpusKb}`)

// ---- the query classes of the benchmark (same seeds) ----
const vocabulary = corpus().vocabulary
const classes: Array<{ name: string; shape: ReadonlyArray<Band>; seed: number }> = [
  { name: "1 common", shape: ["common"], seed: 1 },
  { name: "1 mid", shape: ["mid"], seed: 2 },
  { name: "1 rare", shape: ["rare"], seed: 3 },
  { name: "3 mixed", shape: ["common", "mid", "rare"], seed: 4 },
  { name: "3 content", shape: ["mid", "mid", "rare"], seed: 5 }
]
const queryLists = classes.map((c) => ({ ...c, list: queries(vocabulary, c.shape, perClass, c.seed) }))

// ---- the server's SQL today (server/knowledge/search/service.ts, commit ccd8d8f; keep in step with it) ----
const kbHitsSql = `SELECT f.rowid AS rowid, bm25(passages_fts) AS score FROM passages_fts f
  JOIN passages p ON p.id = f.rowid JOIN sources s ON s.id = p.source_id
  JOIN knowledgebase_sources ks ON ks.source_id = s.id AND ks.knowledgebase_id = ?
  WHERE passages_fts MATCH ? AND s.organization_id = ? AND s.status = 'ready' AND s.disabled = 0
  ORDER BY score, f.rowid LIMIT ?`
const rowsSql = (n: number) => `SELECT p.id AS rowid, p.id, p.source_id, p.section, p.text, s.name, s.knowledgebase_id
  FROM passages p JOIN sources s ON s.id = p.source_id WHERE p.id IN (${Array.from({ length: n }, () => "?").join(", ")})`

interface Hit {
  rowid: number
  score: number
}
type Search = (terms: ReadonlyArray<string>) => number

const makeVariants = (conn: Database.Database) => {
  const kbHits = conn.prepare(kbHitsSql)
  const rowsStatements = new Map<number, Database.Statement>()
  const rows = (ids: ReadonlyArray<number>) => {
    if (ids.length === 0) return []
    let statement = rowsStatements.get(ids.length)
    if (!statement) {
      statement = conn.prepare(rowsSql(ids.length))
      rowsStatements.set(ids.length, statement)
    }
    return statement.all(...ids) as Array<{ text: string }>
  }
  const count = conn.prepare("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?").pluck()
  const ftsTop = conn.prepare("SELECT rowid, bm25(passages_fts) AS score FROM passages_fts WHERE passages_fts MATCH ? ORDER BY score, rowid LIMIT ?")
  const boundedTop = conn.prepare(
    `SELECT rowid, score FROM (SELECT rowid, bm25(passages_fts) AS score FROM passages_fts WHERE passages_fts MATCH ? ORDER BY rowid DESC LIMIT ?)
     ORDER BY score, rowid LIMIT ?`
  )
  const eligibleStatements = new Map<number, Database.Statement>()
  /** Which of these passages the Knowledgebase's search may answer (the filter of the hit query). */
  const eligible = (ids: ReadonlyArray<number>): Set<number> => {
    if (ids.length === 0) return new Set()
    let statement = eligibleStatements.get(ids.length)
    if (!statement) {
      statement = conn
        .prepare(
          // CROSS JOIN keeps the passages as the outer loop: otherwise the planner may walk every
          // passage of the Knowledgebase through knowledgebase_sources and passages_source.
          `SELECT p.id FROM passages p CROSS JOIN sources s ON s.id = p.source_id
           CROSS JOIN knowledgebase_sources ks ON ks.source_id = s.id AND ks.knowledgebase_id = ?
           WHERE p.id IN (${ids.map(() => "?").join(", ")}) AND s.organization_id = ? AND s.status = 'ready' AND s.disabled = 0`
        )
        .pluck()
      eligibleStatements.set(ids.length, statement)
    }
    return new Set(statement.all(corpusKb, ...ids, organizationId) as Array<number>)
  }
  /**
   * Rank on the FTS5 table alone, then keep the eligible ones among the top `k`; when fewer than
   * `depth` pass and the index had more, widen `k` (×8) and filter again.
   */
  const filtered = (top: (k: number) => Array<Hit>): Array<Hit> => {
    for (let k = Math.max(64, depth * 4); ; k *= 8) {
      const candidates = top(k)
      const ok = eligible(candidates.map((h) => h.rowid))
      const kept = candidates.filter((h) => ok.has(h.rowid)).slice(0, depth)
      if (kept.length >= depth || candidates.length < k) return kept
    }
  }
  const twoStep = (match: string): Array<Hit> => filtered((k) => ftsTop.all(match, k) as Array<Hit>)
  // Document frequency of a term: stem it with FTS5's own tokenizer, look it up in an fts5vocab table.
  conn.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer USING fts5(t, tokenize='porter unicode61')")
  conn.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer_terms USING fts5vocab(temp, stemmer, instance)")
  conn.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.passages_vocab USING fts5vocab(main, passages_fts, row)")
  const stemInsert = conn.prepare("INSERT INTO temp.stemmer (rowid, t) VALUES (1, ?)")
  const stemRead = conn.prepare("SELECT term FROM temp.stemmer_terms").pluck()
  const stemClear = conn.prepare("DELETE FROM temp.stemmer")
  const docFrequency = conn.prepare("SELECT doc FROM temp.passages_vocab WHERE term = ?").pluck()
  const frequencies = (terms: ReadonlyArray<string>): Array<number> =>
    terms.map((term) => {
      stemInsert.run(term)
      const stem = stemRead.get() as string | undefined
      stemClear.run()
      return stem === undefined ? 0 : ((docFrequency.get(stem) as number | undefined) ?? 0)
    })
  /**
   * The terms BM25 weighs: FTS5 clamps the IDF of a term found in at least half the rows to 1e-6,
   * so with other terms in the query it only adds rows that rank below every row holding them.
   */
  const weighed = (terms: ReadonlyArray<string>, share = 0.5): ReadonlyArray<string> => {
    const df = frequencies(terms)
    const kept = terms.filter((_, i) => df[i]! < share * totalPassages)
    return kept.length > 0 ? kept : terms
  }
  const snippets = (hits: ReadonlyArray<Hit>, terms: ReadonlyArray<string>) => {
    let chars = 0
    for (const row of rows(hits.map((h) => h.rowid))) chars += snippetOf(row.text, terms).length
    return chars
  }

  const rankOnly = conn.prepare("SELECT rowid, rank AS score FROM passages_fts WHERE passages_fts MATCH ? ORDER BY rank LIMIT ?")
  const kbHitsByRank = conn.prepare(kbHitsSql.replace("bm25(passages_fts) AS score", "f.rank AS score").replace("ORDER BY score, f.rowid", "ORDER BY f.rank"))
  const variants: Record<string, Search> = {
    "server today: hit query (joins every match)": (terms) => kbHits.all(corpusKb, matchExpression(terms), organizationId, depth).length,
    "today's query with ORDER BY f.rank": (terms) => kbHitsByRank.all(corpusKb, matchExpression(terms), organizationId, depth).length,
    "server today + rows + snippets": (terms) => {
      const hits = kbHits.all(corpusKb, matchExpression(terms), organizationId, depth) as Array<Hit>
      return snippets(hits.slice(0, limit), terms)
    },
    "floor: count(*) of the matches": (terms) => count.get(matchExpression(terms)) as number,
    "floor: bm25 on FTS5 alone, ORDER BY LIMIT": (terms) => ftsTop.all(matchExpression(terms), depth).length,
    "FTS5 alone, ORDER BY rank LIMIT": (terms) => rankOnly.all(matchExpression(terms), depth).length,
    "A. rank on FTS5 alone, filter top-k": (terms) => twoStep(matchExpression(terms)).length,
    "B. drop clamped terms (df >= N/2), today's query": (terms) => kbHits.all(corpusKb, matchExpression(weighed(terms)), organizationId, depth).length,
    "A+B": (terms) => twoStep(matchExpression(weighed(terms))).length,
    "A+B': drop terms in >= 1/4 of the passages (changes some rankings)": (terms) => twoStep(matchExpression(weighed(terms, 0.25))).length,
    "A+B + rows + snippets": (terms) => {
      const hits = twoStep(matchExpression(weighed(terms)))
      return snippets(hits.slice(0, limit), terms)
    },
    "C. A+B; only words in >= 1/4 of passages: rank their newest 5,000": (terms) => {
      const kept = weighed(terms)
      const match = matchExpression(kept)
      if (!frequencies(kept).every((df) => df * 4 >= totalPassages)) return twoStep(match).length
      return filtered((k) => boundedTop.all(match, 5_000, k) as Array<Hit>).length
    }
  }
  return Object.assign(variants, { helpers: { twoStep, weighed } })
}

interface Timing {
  readonly medianMs: number
  readonly p99Ms: number
  readonly maxMs: number
}
const timeSearch = (search: Search, list: ReadonlyArray<string>): Timing => {
  const times: Array<number> = []
  for (const query of list) search(queryTerms(query)) // warm
  for (let r = 0; r < reps; r++) {
    for (const query of list) {
      const terms = queryTerms(query)
      const started = performance.now()
      search(terms)
      times.push(performance.now() - started)
    }
  }
  times.sort((a, b) => a - b)
  const at = (p: number) => times[Math.min(times.length - 1, Math.max(0, Math.ceil(p * times.length) - 1))]!
  return { medianMs: Number(at(0.5).toFixed(2)), p99Ms: Number(at(0.99).toFixed(2)), maxMs: Number(at(1).toFixed(2)) }
}

const results: Array<{ variant: string; byClass: Record<string, Timing> }> = []
const measure = (label: string, search: Search) => {
  const byClass: Record<string, Timing> = {}
  for (const c of queryLists) byClass[c.name] = timeSearch(search, c.list)
  results.push({ variant: label, byClass })
  console.log(`  ${label.padEnd(66)} ${queryLists.map((c) => `${c.name} ${fmt(byClass[c.name]!.medianMs, 1)}/${fmt(byClass[c.name]!.p99Ms, 1)}`).join("  ")}`)
}

// Same answers? The rewrites should return the hits of today's query in the same order: compared
// exactly (passage ids), and as the API shows them (scores to 4 decimals: a clamped term only adds
// ~1e-6 to a score, which can reorder rows that tie at that precision).
const checkSame = (conn: Database.Database) => {
  const kbHits = conn.prepare(kbHitsSql)
  const { twoStep, weighed } = makeVariants(conn).helpers
  const ids = (hits: ReadonlyArray<Hit>) => hits.map((h) => h.rowid).join(",")
  const shown = (hits: ReadonlyArray<Hit>) => hits.map((h) => (Math.round(-h.score * 10_000) / 10_000).toFixed(4)).join(",")
  const tally = { compared: 0, A: [0, 0], AB: [0, 0], AB4: [0, 0] }
  const compare = (slot: Array<number>, today: ReadonlyArray<Hit>, other: ReadonlyArray<Hit>) => {
    if (ids(other) === ids(today)) slot[0]!++
    if (shown(other) === shown(today)) slot[1]!++
  }
  for (const c of queryLists) {
    for (const query of c.list) {
      const terms = queryTerms(query)
      const today = kbHits.all(corpusKb, matchExpression(terms), organizationId, depth) as Array<Hit>
      tally.compared++
      compare(tally.A, today, twoStep(matchExpression(terms)))
      compare(tally.AB, today, twoStep(matchExpression(weighed(terms))))
      compare(tally.AB4, today, twoStep(matchExpression(weighed(terms, 0.25))))
    }
  }
  return tally
}

console.log(`\nmedian/p99 ms per query class (${perClass} queries × ${reps} repetitions, limit ${limit}):`)
console.log("\nthe server's read connection as configured (2 MB page cache, no mmap):")
const { helpers: _helpers, ...base } = makeVariants(db)
for (const [label, search] of Object.entries(base)) measure(label, search)
const same = checkSame(db)
console.log(
  `  (top ${depth} of ${same.compared} queries, same ids / same scores at the API's 4 decimals as today's query: ` +
    `A ${same.A[0]}/${same.A[1]}, A+B ${same.AB[0]}/${same.AB[1]}, A+B' ${same.AB4[0]}/${same.AB4[1]})`
)

console.log("\nsettings (today's hit query unless named):")
{
  const mapped = new Database(file, { readonly: true })
  mapped.pragma("mmap_size = 1073741824")
  const v = makeVariantsReadOnly(mapped)
  measure("mmap_size = 1 GB: today's hit query", v.today)
  measure("mmap_size = 1 GB: A+B", v.aPlusB)
  mapped.close()
}
{
  const cached = new Database(file, { readonly: true })
  cached.pragma("cache_size = -262144")
  const v = makeVariantsReadOnly(cached)
  v.today(queryTerms("the"))
  measure("cache_size = 256 MB: today's hit query", v.today)
  cached.close()
}
{
  const started = performance.now()
  db.exec("CREATE INDEX passages_id_source ON passages (id, source_id)")
  const ms = performance.now() - started
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${kbHitsSql}`).all(corpusKb, '"the"', organizationId, depth) as Array<{ detail: string }>).map((r) => r.detail)
  const fresh = makeVariants(db)
  measure(`covering index passages(id, source_id) (${(ms / 1000).toFixed(1)} s to build): today's query`, fresh["server today: hit query (joins every match)"]!)
  console.log(`    plan: ${plan.join(" | ")}`)
  db.exec("DROP INDEX passages_id_source")
}
const sizeOf = (table: string) => db.prepare(`SELECT sum(length(block)) FROM ${table}_data`).pluck().get() as number
const ftsRows = () => db.prepare("SELECT count(*) FROM passages_fts_data").pluck().get() as number
const before = { bytes: sizeOf("passages_fts"), rows: ftsRows() }
{
  const started = performance.now()
  db.exec("INSERT INTO passages_fts (passages_fts) VALUES ('optimize')")
  const ms = performance.now() - started
  const after = { bytes: sizeOf("passages_fts"), rows: ftsRows() }
  const fresh = makeVariants(db)
  measure(`FTS5 'optimize' (${(ms / 1000).toFixed(1)} s): today's hit query`, fresh["server today: hit query (joins every match)"]!)
  measure("FTS5 'optimize': bm25 on FTS5 alone", fresh["floor: bm25 on FTS5 alone, ORDER BY LIMIT"]!)
  measure("FTS5 'optimize': A+B", fresh["A+B"]!)
  console.log(
    `    index ${(before.bytes / 1e6).toFixed(1)} MB in ${before.rows} records before, ${(after.bytes / 1e6).toFixed(1)} MB in ${after.rows} after`
  )
}
let detailColumn: { buildSeconds: number; bytes: number } | null = null
{
  const started = performance.now()
  db.exec(
    "CREATE VIRTUAL TABLE passages_fts_col USING fts5(text, content='passages', content_rowid='id', tokenize='porter unicode61', detail='column')"
  )
  db.exec("INSERT INTO passages_fts_col (passages_fts_col) VALUES ('rebuild')")
  db.exec("INSERT INTO passages_fts_col (passages_fts_col) VALUES ('optimize')")
  detailColumn = { buildSeconds: Number(((performance.now() - started) / 1000).toFixed(1)), bytes: sizeOf("passages_fts_col") }
  const top = db.prepare("SELECT rowid, bm25(passages_fts_col) AS score FROM passages_fts_col WHERE passages_fts_col MATCH ? ORDER BY score LIMIT ?")
  const count = db.prepare("SELECT count(*) FROM passages_fts_col WHERE passages_fts_col MATCH ?").pluck()
  measure("detail=column (optimized): count(*)", (terms) => count.get(matchExpression(terms)) as number)
  measure("detail=column (optimized): bm25 on FTS5 alone", (terms) => top.all(matchExpression(terms), depth).length)
  console.log(`    index ${(detailColumn.bytes / 1e6).toFixed(1)} MB (detail=full, optimized: ${(sizeOf("passages_fts") / 1e6).toFixed(1)} MB), built in ${detailColumn.buildSeconds} s`)
}

/** Today's hit query and A+B on a read-only connection (no temp tables needed for today's query). */
function makeVariantsReadOnly(conn: Database.Database) {
  const kbHits = conn.prepare(kbHitsSql)
  const variants = makeVariants(conn)
  return {
    today: ((terms) => kbHits.all(corpusKb, matchExpression(terms), organizationId, depth).length) as Search,
    aPlusB: variants["A+B"]!
  }
}

// snippets alone
{
  const sample = db.prepare("SELECT text FROM passages ORDER BY id LIMIT 50 OFFSET 5000").pluck().all() as Array<string>
  const terms = queryTerms(queryLists[3]!.list[0]!)
  const started = performance.now()
  for (let i = 0; i < 100; i++) for (const text of sample) snippetOf(text, terms)
  console.log(`\nsnippetOf: ${(((performance.now() - started) / 5_000) * 1000).toFixed(1)} µs per passage (10 hits ≈ ${(((performance.now() - started) / 5_000) * 10).toFixed(2)} ms)`)
}

console.log("")
console.log(
  table(
    ["variant", ...queryLists.map((c) => `${c.name} med/p99 ms`)],
    results.map((r) => [r.variant, ...queryLists.map((c) => `${fmt(r.byClass[c.name]!.medianMs, 2)} / ${fmt(r.byClass[c.name]!.p99Ms, 2)}`)])
  )
)
mkdirSync(resultsDir, { recursive: true })
const out = join(resultsDir, "sources-sql-latest.json")
writeFileSync(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), db: flags.db, totalPassages, perClass, reps, limit, queries: queryLists, results, sameTopHits: same, ftsBefore: before, detailColumn }, null, 2)}\n`
)
console.log(`\nresults: ${out}`)
db.close()
