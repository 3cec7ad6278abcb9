/**
 * Every operation of a real server's `GET /openapi.json`, with its path filled with real ids: for
 * tests that send the same wrong request to each operation of the document.
 */
import { startTestServer, type TestServer } from "./server.js"

/** One operation of the document, ready to send. */
export interface DocumentOperation {
  readonly method: string
  /** The path under `{base_url}`, its parameters filled with real ids (else their names). */
  readonly path: string
  /** The operation as the document describes it. */
  readonly operation: any
}

/** A server with a Knowledgebase, a page and a source, its OpenAPI document and their ids. */
export interface DocumentFixture {
  readonly server: TestServer
  readonly operations: () => ReadonlyArray<DocumentOperation>
  /** The seeded ids by path parameter name: `id` (the Knowledgebase), `pageId`, `sourceId`. */
  readonly ids: Readonly<Record<string, string>>
}

/** Starts a server (no ingestion worker, no rate limit in the way) and seeds one of each object. */
export const startDocumentFixture = async (name: string): Promise<DocumentFixture> => {
  const server = await startTestServer({ server: { ingestionWorker: false, requestsPerMinute: 1_000_000 } })
  const doc = (await server.request("GET", "/openapi.json", { key: null })).body
  const ids: Record<string, string> = {}
  ids.id = (await server.request("POST", "/knowledgebases", { body: { name } })).body.knowledgebase.id
  const kb = `/knowledgebases/${ids.id}`
  ids.pageId = (await server.request("POST", `${kb}/pages`, { body: { title: "A page", bodyMarkdown: "Words." } })).body.page.id
  ids.sourceId = (await server.request("POST", `${kb}/sources`, { body: { name: "Notes", contentText: "Some notes." } })).body.source.id
  const operations = () =>
    Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path: template.replace("/api/v1", "").replace(/\{(\w+)\}/g, (_, param: string) => ids[param] ?? param),
          operation
        }))
    )
  return { server, operations, ids }
}
