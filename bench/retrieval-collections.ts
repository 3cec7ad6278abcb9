/**
 * The test collections of `npm run bench:retrieval`, vendored under `fixtures/retrieval/<name>/`
 * (see its README.md): `docs.jsonl.gz` (one `{id, title, text}` a line, `title` null when the
 * collection has none), `queries.jsonl` (`{id, text}`, only the queries that have judgments) and
 * `qrels.tsv` (a `query-id corpus-id score` header, then one relevant pair a line, score 1).
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { gunzipSync } from "node:zlib"
import type { CollectionDocument, CollectionQuery, Judgment } from "./retrieval-smart.js"

/** The collections the benchmark knows, by the name of their folder. */
export const collectionNames = ["cisi", "med"] as const
export type CollectionName = (typeof collectionNames)[number]

/** A loaded collection: documents, judged queries and, per query id, its relevant document ids. */
export interface Collection {
  readonly name: CollectionName
  /** How the report names it. */
  readonly label: string
  readonly documents: ReadonlyArray<CollectionDocument>
  readonly queries: ReadonlyArray<CollectionQuery>
  readonly relevant: ReadonlyMap<string, ReadonlySet<string>>
}

/** Labels of the collections in reports. */
export const collectionLabels: Record<CollectionName, string> = { cisi: "CISI", med: "MEDLINE" }

/** `fixtures/retrieval/` from `bench/` or `dist/bench/` alike. */
export const retrievalFixturesDir = (): string => {
  const here = dirname(fileURLToPath(import.meta.url))
  const found = [resolve(here, "../fixtures/retrieval"), resolve(here, "../../fixtures/retrieval")].find((dir) => existsSync(dir))
  if (found === undefined) throw new Error(`fixtures/retrieval/ not found from ${here}`)
  return found
}

const jsonLines = <A>(text: string): Array<A> =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as A)

/** Serializes documents as `docs.jsonl` (before gzip). */
export const documentsJsonl = (documents: ReadonlyArray<CollectionDocument>): string =>
  documents.map((d) => JSON.stringify({ id: d.id, title: d.title, text: d.text })).join("\n") + "\n"

/** Serializes queries as `queries.jsonl`. */
export const queriesJsonl = (queries: ReadonlyArray<CollectionQuery>): string =>
  queries.map((q) => JSON.stringify({ id: q.id, text: q.text })).join("\n") + "\n"

/** Serializes judgments as `qrels.tsv`. */
export const qrelsTsv = (judgments: ReadonlyArray<Judgment>): string =>
  ["query-id\tcorpus-id\tscore", ...judgments.map((j) => `${j.queryId}\t${j.docId}\t1`)].join("\n") + "\n"

/** Reads `qrels.tsv`: relevant document ids per query id. */
export const parseQrels = (text: string): Map<string, Set<string>> => {
  const relevant = new Map<string, Set<string>>()
  const [header, ...rows] = text.split("\n").filter((line) => line.trim() !== "")
  if (header !== "query-id\tcorpus-id\tscore") throw new Error(`qrels.tsv: unexpected header ${JSON.stringify(header)}`)
  for (const row of rows) {
    const [queryId, docId, score] = row.split("\t")
    if (!queryId || !docId || score === undefined) throw new Error(`qrels.tsv: bad row ${JSON.stringify(row)}`)
    if (Number(score) <= 0) continue
    const set = relevant.get(queryId) ?? new Set<string>()
    set.add(docId)
    relevant.set(queryId, set)
  }
  return relevant
}

/** Loads one vendored collection, checking that every judgment names a known query and document. */
export const loadCollection = (name: CollectionName, dir = join(retrievalFixturesDir(), name)): Collection => {
  const documents = jsonLines<CollectionDocument>(gunzipSync(readFileSync(join(dir, "docs.jsonl.gz"))).toString("utf8"))
  const queries = jsonLines<CollectionQuery>(readFileSync(join(dir, "queries.jsonl"), "utf8"))
  const relevant = parseQrels(readFileSync(join(dir, "qrels.tsv"), "utf8"))
  const docIds = new Set(documents.map((d) => d.id))
  const queryIds = new Set(queries.map((q) => q.id))
  for (const [queryId, docs] of relevant) {
    if (!queryIds.has(queryId)) throw new Error(`${name}: qrels name query ${queryId}, absent from queries.jsonl`)
    for (const docId of docs) if (!docIds.has(docId)) throw new Error(`${name}: qrels name document ${docId}, absent from docs.jsonl.gz`)
  }
  return { name, label: collectionLabels[name], documents, queries: queries.filter((q) => relevant.has(q.id)), relevant }
}
