/**
 * Converts the SMART files of CISI and MEDLINE (as the University of Glasgow IR group distributes
 * them: `CISI.ALL`, `CISI.QRY`, `CISI.REL`, `MED.ALL`, `MED.QRY`, `MED.REL`) into the vendored
 * format of `fixtures/retrieval/` (bench/retrieval-collections.ts). Only judged queries are kept;
 * documents keep their title (`.T`) and text (`.W`), see bench/retrieval-smart.ts. The output is
 * deterministic (gzip without a timestamp), so a second run rewrites the same bytes.
 *
 *   node dist/bench/retrieval-convert.js --from DIR [--to fixtures/retrieval]
 *
 * `DIR` holds the six files (CRLF or LF line ends alike); the counts are checked against the
 * collections' published sizes before anything is written.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { gzipSync } from "node:zlib"
import { type CollectionName, documentsJsonl, queriesJsonl, qrelsTsv, retrievalFixturesDir } from "./retrieval-collections.js"
import { smartDocuments, smartJudgments, smartQueries } from "./retrieval-smart.js"

/** How each collection's files are named and read, and the sizes they must have. */
const layouts: Record<CollectionName, { prefix: string; hasTitles: boolean; docColumn: 1 | 2; documents: number; queries: number; judged: number; judgments: number }> = {
  cisi: { prefix: "CISI", hasTitles: true, docColumn: 1, documents: 1_460, queries: 112, judged: 76, judgments: 3_114 },
  med: { prefix: "MED", hasTitles: false, docColumn: 2, documents: 1_033, queries: 30, judged: 30, judgments: 696 }
}

const { values } = parseArgs({ options: { from: { type: "string" }, to: { type: "string" } } })
if (!values.from) throw new Error("--from DIR is required (the folder holding CISI.ALL, CISI.QRY, CISI.REL, MED.ALL, MED.QRY, MED.REL)")
const from = values.from
const to = values.to ?? retrievalFixturesDir()

for (const [name, layout] of Object.entries(layouts) as Array<[CollectionName, (typeof layouts)[CollectionName]]>) {
  const read = (suffix: string) => readFileSync(join(from, `${layout.prefix}.${suffix}`), "latin1")
  const documents = smartDocuments(read("ALL"), layout.hasTitles)
  const queries = smartQueries(read("QRY"))
  const judgments = smartJudgments(read("REL"), layout.docColumn)
  const judged = new Set(judgments.map((j) => j.queryId))
  const kept = queries.filter((q) => judged.has(q.id))
  const sizes = { documents: documents.length, queries: queries.length, judged: kept.length, judgments: judgments.length }
  for (const [what, count] of Object.entries(sizes)) {
    const expected = layout[what as keyof typeof sizes]
    if (count !== expected) throw new Error(`${name}: ${count} ${what}, expected ${expected}`)
  }
  const docIds = new Set(documents.map((d) => d.id))
  const unknown = judgments.filter((j) => !docIds.has(j.docId) || !queries.some((q) => q.id === j.queryId))
  if (unknown.length > 0) throw new Error(`${name}: ${unknown.length} judgments name unknown documents or queries`)
  const dir = join(to, name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "docs.jsonl.gz"), gzipSync(documentsJsonl(documents), { level: 9 }))
  writeFileSync(join(dir, "queries.jsonl"), queriesJsonl(kept))
  writeFileSync(join(dir, "qrels.tsv"), qrelsTsv(judgments))
  console.log(`${name}: ${documents.length} documents, ${queries.length} queries (${kept.length} judged, kept), ${judgments.length} judgments -> ${dir}`)
}
