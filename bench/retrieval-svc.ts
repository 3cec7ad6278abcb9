/**
 * svc's side of `npm run bench:retrieval`, all through the External API over HTTP: a collection's
 * documents uploaded as sources (the upload endpoint, inline text) or written as pages, and its
 * queries searched with `POST /knowledgebases/{id}/search`, hits mapped back to the collection's
 * document ids.
 */
import type { Collection } from "./retrieval-collections.js"
import { firstHitPerDocument } from "./retrieval-metrics.js"
import { sleep } from "./report.js"

/** The most characters a search query may have (the contract's limit). */
export const maxQueryChars = 1_000
/** The most characters of a source name or page title. */
const maxNameChars = 200
/** Documents of the top this many are evaluated (MAP@100). */
export const evaluatedDepth = 100
/** Hits asked for per search call (the contract's maximum). */
const searchPageSize = 200

/** A query as sent: at most {@link maxQueryChars}, cut at a space. */
export const sentQuery = (text: string): string => cutAtSpace(text, maxQueryChars)

/** `text` cut to at most `max` characters, at the last space before the cut when there is one. */
export const cutAtSpace = (text: string, max: number): string => {
  if (text.length <= max) return text
  const space = text.lastIndexOf(" ", max)
  return (space > max / 2 ? text.slice(0, space) : text.slice(0, max)).trimEnd()
}

/** The source name of a document: `<title>.txt` (the title cut to fit 200 characters), else `<collection>-<id>.txt`. */
export const sourceNameOf = (collection: Collection["name"], document: Collection["documents"][number]): string =>
  document.title === null || document.title === "" ? `${collection}-${document.id}.txt` : `${cutAtSpace(document.title, maxNameChars - 4)}.txt`

/** The page title of a document: its title (cut to 200 characters), else `Document <id>`. */
export const pageTitleOf = (document: Collection["documents"][number]): string =>
  document.title === null || document.title === "" ? `Document ${document.id}` : cutAtSpace(document.title, maxNameChars)

/** A client of one svc server for the benchmark. */
export interface SvcClient {
  readonly baseUrl: string
  readonly key: string
}

interface Answer {
  readonly status: number
  readonly text: string
  readonly json: <A>() => A
}

const call = async (svc: SvcClient, method: "GET" | "POST", path: string, body?: unknown): Promise<Answer> => {
  const response = await fetch(`${svc.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${svc.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, text, json: <A>() => JSON.parse(text) as A }
}

const expectStatus = (answer: Answer, expected: number, what: string): Answer => {
  if (answer.status !== expected) throw new Error(`${what}: answered ${answer.status}, expected ${expected}: ${answer.text.slice(0, 300)}`)
  return answer
}

/** Runs `work` on every item with at most `concurrency` at a time, in order of the items. */
const eachConcurrently = async <A>(items: ReadonlyArray<A>, concurrency: number, work: (item: A, index: number) => Promise<void>): Promise<void> => {
  let next = 0
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) await work(items[index]!, index)
  }
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker))
}

/** Creates a Knowledgebase and returns its id. */
export const createKnowledgebase = async (svc: SvcClient, name: string): Promise<string> =>
  expectStatus(await call(svc, "POST", "/knowledgebases", { name, description: "Made by the retrieval benchmark." }), 201, "POST /knowledgebases").json<{
    knowledgebase: { id: string }
  }>().knowledgebase.id

/** What an upload pass leaves: which documents each source holds (identical texts share one source). */
export interface UploadedSources {
  readonly documentsOf: ReadonlyMap<string, ReadonlyArray<string>>
  readonly deduplicated: number
  readonly failed: ReadonlyArray<string>
  readonly uploadSeconds: number
  readonly readySeconds: number
}

/**
 * Uploads every document as a source (`contentText`, named by {@link sourceNameOf}), `concurrency`
 * at a time, then polls the Knowledgebase's sources until none is processing. An upload the
 * service deduplicates (the same text already held) maps its source to one more document.
 */
export const uploadSources = async (
  svc: SvcClient,
  knowledgebaseId: string,
  collection: Collection,
  concurrency: number,
  progress: (line: string) => void
): Promise<UploadedSources> => {
  const started = Date.now()
  const documentsOf = new Map<string, Array<string>>()
  let deduplicated = 0
  await eachConcurrently(collection.documents, concurrency, async (document, index) => {
    const answer = expectStatus(
      await call(svc, "POST", `/knowledgebases/${knowledgebaseId}/sources`, { name: sourceNameOf(collection.name, document), contentText: document.text }),
      202,
      `upload of ${collection.name} document ${document.id}`
    ).json<{ source: { id: string }; deduplicated?: boolean }>()
    if (answer.deduplicated === true) deduplicated += 1
    const ids = documentsOf.get(answer.source.id) ?? []
    ids.push(document.id)
    documentsOf.set(answer.source.id, ids)
    if ((index + 1) % 250 === 0) progress(`  ${collection.name}: ${index + 1}/${collection.documents.length} uploaded`)
  })
  for (const ids of documentsOf.values()) ids.sort((a, b) => Number(a) - Number(b))
  const uploaded = Date.now()
  let failed: Array<string> = []
  for (let polls = 0; ; polls++) {
    const statuses = await sourceStatuses(svc, knowledgebaseId)
    const processing = statuses.filter((s) => s.status === "processing").length
    if (processing === 0) {
      failed = statuses.filter((s) => s.status !== "ready").map((s) => `${s.id}: ${s.status}`)
      break
    }
    if (polls % 5 === 0) progress(`  ${collection.name}: ${statuses.length - processing}/${statuses.length} sources indexed`)
    await sleep(1_000)
  }
  return {
    documentsOf,
    deduplicated,
    failed,
    uploadSeconds: (uploaded - started) / 1000,
    readySeconds: (Date.now() - started) / 1000
  }
}

/** Every source of a Knowledgebase with its status. */
const sourceStatuses = async (svc: SvcClient, knowledgebaseId: string): Promise<Array<{ id: string; status: string }>> => {
  const all: Array<{ id: string; status: string }> = []
  let cursor: string | null = null
  do {
    const path: string = `/knowledgebases/${knowledgebaseId}/sources?limit=200&fields=id,status${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const page = expectStatus(await call(svc, "GET", path), 200, "GET sources").json<{ sources: Array<{ id: string; status: string }>; nextCursor: string | null }>()
    all.push(...page.sources)
    cursor = page.nextCursor
  } while (cursor !== null)
  return all
}

/** Writes every document as a page (title by {@link pageTitleOf}, the text as its markdown); returns the document of each page id. */
export const createPages = async (
  svc: SvcClient,
  knowledgebaseId: string,
  collection: Collection,
  concurrency: number,
  progress: (line: string) => void
): Promise<{ readonly documentsOf: ReadonlyMap<string, ReadonlyArray<string>>; readonly seconds: number }> => {
  const started = Date.now()
  const documentsOf = new Map<string, ReadonlyArray<string>>()
  await eachConcurrently(collection.documents, concurrency, async (document, index) => {
    const answer = expectStatus(
      await call(svc, "POST", `/knowledgebases/${knowledgebaseId}/pages`, { title: pageTitleOf(document), bodyMarkdown: document.text }),
      201,
      `page of ${collection.name} document ${document.id}`
    ).json<{ page: { id: string } }>()
    documentsOf.set(answer.page.id, [document.id])
    if ((index + 1) % 250 === 0) progress(`  ${collection.name}: ${index + 1}/${collection.documents.length} pages written`)
  })
  return { documentsOf, seconds: (Date.now() - started) / 1000 }
}

/** One search hit as the benchmark reads it. */
interface Hit {
  readonly kind: string
  readonly citation: { readonly sourceId?: string; readonly pageId?: string }
}

/** What one query's search gave: the ranking of distinct documents and how the hits were spread. */
export interface SearchedQuery {
  readonly ranking: ReadonlyArray<string>
  /** Distinct documents among the first 10 hits (below 10 when a document had several passages there). */
  readonly distinctInFirst10Hits: number
  readonly calls: number
}

/**
 * Searches one query (`kinds` documents or pages), paging with the cursor until the top
 * {@link evaluatedDepth} distinct documents are known or the hits end; a document counts at its
 * first hit.
 */
export const searchQuery = async (
  svc: SvcClient,
  knowledgebaseId: string,
  kind: "documents" | "pages",
  query: string,
  documentsOf: ReadonlyMap<string, ReadonlyArray<string>>
): Promise<SearchedQuery> => {
  const hits: Array<Hit> = []
  const documentsOfHit = (hit: Hit) => documentsOf.get((kind === "documents" ? hit.citation.sourceId : hit.citation.pageId) ?? "") ?? []
  let cursor: string | null = null
  let calls = 0
  do {
    const body: Record<string, unknown> = { query, kinds: [kind], limit: searchPageSize, ...(cursor === null ? {} : { cursor }) }
    const page: { results: Array<Hit>; nextCursor: string | null } = expectStatus(await call(svc, "POST", `/knowledgebases/${knowledgebaseId}/search`, body), 200, `search ${JSON.stringify(query.slice(0, 60))}`).json<{
      results: Array<Hit>
      nextCursor: string | null
    }>()
    calls += 1
    hits.push(...page.results)
    cursor = page.nextCursor
  } while (cursor !== null && firstHitPerDocument(hits, documentsOfHit, evaluatedDepth).length < evaluatedDepth)
  return {
    ranking: firstHitPerDocument(hits, documentsOfHit, evaluatedDepth),
    distinctInFirst10Hits: new Set(hits.slice(0, 10).flatMap((hit) => documentsOfHit(hit).slice(0, 1))).size,
    calls
  }
}

/** Searches every query of the collection, `concurrency` at a time. */
export const searchAll = async (
  svc: SvcClient,
  knowledgebaseId: string,
  kind: "documents" | "pages",
  collection: Collection,
  documentsOf: ReadonlyMap<string, ReadonlyArray<string>>,
  concurrency: number
): Promise<{ readonly byQuery: ReadonlyMap<string, SearchedQuery>; readonly seconds: number }> => {
  const started = Date.now()
  const byQuery = new Map<string, SearchedQuery>()
  await eachConcurrently(collection.queries, concurrency, async (query) => {
    byQuery.set(query.id, await searchQuery(svc, knowledgebaseId, kind, sentQuery(query.text), documentsOf))
  })
  return { byQuery, seconds: (Date.now() - started) / 1000 }
}
