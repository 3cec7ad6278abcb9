/**
 * `npm run bench:retrieval`: the quality of svc's search on public test collections with relevance
 * judgments (CISI and MEDLINE, vendored under `fixtures/retrieval/`), beside a plain BM25 computed
 * in the same run by a maintained library (bench/retrieval-reference.ts).
 *
 * Starts the svc server as a child process on a temp database (bench/svc-launcher.ts), makes its
 * organization `default` an Agency one with credits (CISI has 1,460 documents; a Pro Knowledgebase
 * holds 1,000 sources; every document search costs a credit), then for each collection:
 *
 * 1. **sources**: a Knowledgebase where every document is uploaded as a source (the upload
 *    endpoint, `contentText`), searched with `kinds: ["documents"]`;
 * 2. **pages**: a Knowledgebase where every document is a page, searched with `kinds: ["pages"]`;
 * 3. **reference**: minisearch's BM25 over title + text, stop words dropped, Porter-stemmed.
 *
 * Each judged query is searched (at most 1,000 characters, cut at a space: the contract's limit;
 * the reference gets the same text), hits map back to document ids (a document counts at its first
 * hit), and nDCG@10, MAP@100 and Recall@10 are averaged over the judged queries
 * (bench/retrieval-metrics.ts). The table goes to stdout, progress to stderr, the figures (with
 * every query's scores) to `bench/results/retrieval-<date>.json` (`-postgres` before `.json` on
 * PostgreSQL). See docs/performance.md, "Retrieval quality".
 *
 *   node dist/bench/retrieval.js [--collection cisi|med] [--pass sources|pages] [--concurrency 4]
 *        [--database postgres://…] [--keep-data]
 *
 * Exit code: 0 when every document was indexed and every request answered as expected; 2 when the
 * benchmark could not run (a request failed, a source failed to index).
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { runAdmin } from "../server/admin.js"
import { AccountsService } from "../server/identity/service.js"
import { type Child, cleanupOnExit, launchSvc, runBenchmark } from "./children.js"
import type { SvcReady } from "./protocol.js"
import { table } from "./report.js"
import { type Collection, collectionNames, type CollectionName, loadCollection } from "./retrieval-collections.js"
import { meanScores, type RetrievalScores, scoreRanking } from "./retrieval-metrics.js"
import { referenceBm25, referenceIndex } from "./retrieval-reference.js"
import { createKnowledgebase, createPages, evaluatedDepth, maxQueryChars, searchAll, sentQuery, type SvcClient, uploadSources } from "./retrieval-svc.js"

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, "../..")
const resultsDir = join(repoRoot, "bench", "results")

const passNames = ["sources", "pages"] as const
type PassName = (typeof passNames)[number]

const { values: flags } = parseArgs({
  options: {
    collection: { type: "string" },
    pass: { type: "string" },
    concurrency: { type: "string", default: "4" },
    database: { type: "string" },
    "keep-data": { type: "boolean", default: false }
  }
})
const oneOf = <A extends string>(value: string | undefined, choices: ReadonlyArray<A>, flag: string): ReadonlyArray<A> => {
  if (value === undefined) return choices
  if (!(choices as ReadonlyArray<string>).includes(value)) {
    console.error(`--${flag} must be one of ${choices.join(", ")}`)
    process.exit(2)
  }
  return [value as A]
}
const options = {
  collections: oneOf(flags.collection, collectionNames, "collection"),
  passes: oneOf(flags.pass, passNames, "pass"),
  concurrency: Number(flags.concurrency),
  database: flags.database,
  credits: 1_000_000
}
if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
  console.error("--concurrency must be a whole number of 1 or more")
  process.exit(2)
}

/** Progress goes to stderr, so stdout holds the report alone. */
const progress = (line: string) => process.stderr.write(`${line}\n`)

const children: Array<Child<SvcReady>> = []
let dataDir: string | null = null
const cleanup = cleanupOnExit(children, () => dataDir, flags["keep-data"] === true, "the server")

/** The commit the server was built from, and whether search files differ from it. */
const gitState = (): { commit: string | null; searchChangedSinceCommit: boolean | null } => {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim()
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "server/knowledge/search", "server/platform/sql/migrations"], {
      cwd: repoRoot,
      encoding: "utf8"
    }).trim()
    return { commit, searchChangedSinceCommit: dirty !== "" }
  } catch {
    return { commit: null, searchChangedSinceCommit: null }
  }
}

type SystemName = PassName | "reference"
const systemLabels: Record<SystemName, string> = { sources: "svc sources", pages: "svc pages", reference: "reference BM25" }

interface SystemResult {
  readonly mean: RetrievalScores & { readonly queries: number }
  readonly perQuery: Record<string, RetrievalScores>
  readonly details: Record<string, unknown>
}

const perQueryScores = (collection: Collection, rankings: ReadonlyMap<string, ReadonlyArray<string>>): Record<string, RetrievalScores> =>
  Object.fromEntries(
    collection.queries.map((query) => {
      const scores = scoreRanking(rankings.get(query.id) ?? [], collection.relevant.get(query.id) ?? new Set())
      const round = (value: number) => Number(value.toFixed(4))
      return [query.id, { ndcg10: round(scores.ndcg10), map100: round(scores.map100), recall10: round(scores.recall10) }]
    })
  )

const summarize = (values: ReadonlyArray<number>) => ({
  min: values.length === 0 ? 0 : Math.min(...values),
  mean: values.length === 0 ? 0 : Number((values.reduce((a, b) => a + b, 0) / values.length).toFixed(2))
})

const runCollection = async (svc: SvcClient, name: CollectionName): Promise<{ collection: Collection; systems: Partial<Record<SystemName, SystemResult>> }> => {
  const collection = loadCollection(name)
  const truncated = collection.queries.filter((q) => sentQuery(q.text) !== q.text).length
  progress(
    `${collection.label}: ${collection.documents.length} documents, ${collection.queries.length} judged queries` +
      (truncated > 0 ? ` (${truncated} cut to ${maxQueryChars} characters)` : "")
  )
  const systems: Partial<Record<SystemName, SystemResult>> = {}

  const referenceStarted = Date.now()
  const reference = referenceIndex(collection.documents)
  const referenceRankings = new Map(collection.queries.map((q) => [q.id, reference.rank(sentQuery(q.text), evaluatedDepth)]))
  systems.reference = {
    mean: meanScores(referenceRankings, collection.relevant),
    perQuery: perQueryScores(collection, referenceRankings),
    details: { seconds: Number(((Date.now() - referenceStarted) / 1000).toFixed(2)), bm25: referenceBm25, library: "minisearch" }
  }

  if (options.passes.includes("sources")) {
    const knowledgebaseId = await createKnowledgebase(svc, `${collection.label} (sources)`)
    progress(`${collection.label} sources: uploading to ${knowledgebaseId}, ${options.concurrency} at a time`)
    const uploaded = await uploadSources(svc, knowledgebaseId, collection, options.concurrency, progress)
    if (uploaded.failed.length > 0) throw new Error(`${uploaded.failed.length} sources did not become ready: ${uploaded.failed.slice(0, 3).join("; ")}`)
    progress(
      `${collection.label} sources: ${uploaded.documentsOf.size} sources ready in ${uploaded.readySeconds.toFixed(1)} s` +
        (uploaded.deduplicated > 0 ? ` (${uploaded.deduplicated} uploads deduplicated: identical texts)` : "")
    )
    const searched = await searchAll(svc, knowledgebaseId, "documents", collection, uploaded.documentsOf, 2)
    const rankings = new Map([...searched.byQuery].map(([id, q]) => [id, q.ranking]))
    systems.sources = {
      mean: meanScores(rankings, collection.relevant),
      perQuery: perQueryScores(collection, rankings),
      details: {
        knowledgebaseId,
        sources: uploaded.documentsOf.size,
        deduplicatedUploads: uploaded.deduplicated,
        uploadSeconds: Number(uploaded.uploadSeconds.toFixed(1)),
        readySeconds: Number(uploaded.readySeconds.toFixed(1)),
        searchSeconds: Number(searched.seconds.toFixed(1)),
        searchCalls: [...searched.byQuery.values()].reduce((sum, q) => sum + q.calls, 0),
        distinctDocumentsInFirst10Hits: summarize([...searched.byQuery.values()].map((q) => q.distinctInFirst10Hits))
      }
    }
    progress(`${collection.label} sources: ${collection.queries.length} queries searched in ${searched.seconds.toFixed(1)} s`)
  }

  if (options.passes.includes("pages")) {
    const knowledgebaseId = await createKnowledgebase(svc, `${collection.label} (pages)`)
    progress(`${collection.label} pages: writing to ${knowledgebaseId}, ${options.concurrency} at a time`)
    const written = await createPages(svc, knowledgebaseId, collection, options.concurrency, progress)
    const searched = await searchAll(svc, knowledgebaseId, "pages", collection, written.documentsOf, 2)
    const rankings = new Map([...searched.byQuery].map(([id, q]) => [id, q.ranking]))
    systems.pages = {
      mean: meanScores(rankings, collection.relevant),
      perQuery: perQueryScores(collection, rankings),
      details: {
        knowledgebaseId,
        pages: written.documentsOf.size,
        writeSeconds: Number(written.seconds.toFixed(1)),
        searchSeconds: Number(searched.seconds.toFixed(1)),
        searchCalls: [...searched.byQuery.values()].reduce((sum, q) => sum + q.calls, 0)
      }
    }
    progress(`${collection.label} pages: ${collection.queries.length} queries searched in ${searched.seconds.toFixed(1)} s`)
  }
  return { collection, systems }
}

/** The markdown report: a row per collection and system, and svc's nDCG@10 as a share of the reference's. */
const markdownTable = (runs: ReadonlyArray<{ collection: Collection; systems: Partial<Record<SystemName, SystemResult>> }>): string => {
  const rows: Array<Array<string>> = []
  const three = (value: number) => value.toFixed(3)
  for (const { collection, systems } of runs) {
    const reference = systems.reference!.mean.ndcg10
    for (const system of ["sources", "pages", "reference"] as const) {
      const result = systems[system]
      if (!result) continue
      rows.push([
        `${collection.label} (${collection.documents.length} docs, ${result.mean.queries} queries)`,
        systemLabels[system],
        three(result.mean.ndcg10),
        three(result.mean.map100),
        three(result.mean.recall10),
        system === "reference" ? "1.00" : reference === 0 ? "-" : (result.mean.ndcg10 / reference).toFixed(2)
      ])
    }
  }
  const header = ["collection", "system", "nDCG@10", "MAP@100", "Recall@10", "nDCG@10 / reference"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`
  return [line(header), `| ${widths.map((w, i) => (i < 2 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`)).join(" | ")} |`, ...rows.map(line)].join("\n")
}

const main = async (): Promise<number> => {
  const started = Date.now()
  mkdirSync(resultsDir, { recursive: true })
  dataDir = mkdtempSync(join(tmpdir(), "svc-bench-retrieval-"))
  const git = gitState()
  progress(
    `svc retrieval bench: node ${process.version}, commit ${git.commit ?? "?"}` +
      (git.searchChangedSinceCommit ? " (with uncommitted changes to the search code)" : "") +
      `, ${options.database ? "PostgreSQL" : "SQLite"}`
  )
  const svcChild = await launchSvc<SvcReady>({
    dataDir,
    cpu: undefined,
    logFile: join(resultsDir, "retrieval-svc.stderr.log"),
    args: options.database ? ["--database", options.database] : []
  })
  children.push(svcChild)
  await runAdmin(
    { dataDir, database: options.database },
    Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { plan: "agency", credits: options.credits }))
  )
  const svc: SvcClient = { baseUrl: svcChild.ready.baseUrl, key: svcChild.ready.bootstrapKey }
  progress(`svc ready at ${svc.baseUrl}; organization default: Agency plan, ${options.credits.toLocaleString("en")} credits`)

  const runs = []
  for (const name of options.collections) runs.push(await runCollection(svc, name))
  await cleanup()

  const report = markdownTable(runs)
  console.log(report)
  const date = new Date(started).toISOString()
  const out = join(resultsDir, `retrieval-${date.slice(0, 10)}${options.database ? "-postgres" : ""}.json`)
  const json = {
    date,
    node: process.version,
    ...git,
    backend: options.database ? "postgres" : "sqlite",
    options: { ...options, database: options.database ? "postgres" : undefined },
    collections: runs.map(({ collection, systems }) => ({
      name: collection.name,
      documents: collection.documents.length,
      judgedQueries: collection.queries.length,
      judgments: [...collection.relevant.values()].reduce((sum, set) => sum + set.size, 0),
      queriesCut: collection.queries.filter((q) => sentQuery(q.text) !== q.text).map((q) => q.id),
      systems: Object.fromEntries(
        Object.entries(systems).map(([system, result]) => [
          system,
          {
            mean: Object.fromEntries(Object.entries(result.mean).map(([k, v]) => [k, k === "queries" ? v : Number(v.toFixed(4))])),
            ndcg10VsReference: Number((result.mean.ndcg10 / systems.reference!.mean.ndcg10).toFixed(4)),
            details: result.details,
            perQuery: result.perQuery
          }
        ])
      )
    })),
    wallSeconds: Number(((Date.now() - started) / 1000).toFixed(1))
  }
  writeFileSync(out, `${JSON.stringify(json, null, 2)}\n`)
  progress(`results: ${out} (${json.wallSeconds} s)` + (flags["keep-data"] ? `; data kept in ${dataDir}` : ""))
  return 0
}

runBenchmark(main, children, cleanup)
