/**
 * Helpers for the source (document) suites: uploads as JSON and as `multipart/form-data` (through
 * `fetch` and `FormData`, over real sockets), the fixture files, polling a source until it leaves
 * `processing`, reading everything an upload could write (for "nothing written" checks), and a
 * local HTTP server standing in for the web.
 */
import { readFileSync, statSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { organizationId, sql } from "./fixtures.js"
import type { TestResponse, TestServer } from "./server.js"

/** Every field of a Source, in the contract's order. */
export const sourceFieldNames = [
  "id",
  "name",
  "type",
  "status",
  "searchable",
  "disabled",
  "url",
  "updatedAt",
  "createdAt",
  "sizeBytes",
  "errorMessage",
  "createdVia",
  "parentPageId"
] as const

const fixtureUrl = (name: string) => new URL(`../../fixtures/${name}`, import.meta.url)

/** The bytes of a file in `fixtures/`. */
export const fixtureBytes = (name: string): Uint8Array => new Uint8Array(readFileSync(fixtureUrl(name)))
/** The size in bytes of a file in `fixtures/`. */
export const fixtureSize = (name: string): number => statSync(fixtureUrl(name)).size

export interface RequestOptions {
  readonly key?: string | null
  readonly headers?: Record<string, string>
}

const withOptions = (opts: RequestOptions = {}) => ({
  ...(opts.key === undefined ? {} : { key: opts.key }),
  ...(opts.headers === undefined ? {} : { headers: opts.headers })
})

/** `POST /knowledgebases/{kb}/sources` with a JSON body (objects are serialized, strings sent as they are). */
export const uploadJson = (server: TestServer, kb: string, body: unknown, opts?: RequestOptions): Promise<TestResponse> =>
  server.request("POST", `/knowledgebases/${kb}/sources`, { body, ...withOptions(opts) })

/** One part of a multipart upload: a text field, or a file with a name and (optionally) a type. */
export type FormPart =
  | { readonly field: string; readonly value: string }
  | { readonly field: string; readonly file: { readonly name: string; readonly bytes: Uint8Array | string; readonly type?: string } }

/** Reads a fetch `Response` the way `TestServer.request` does. */
export const toTestResponse = async (response: Response): Promise<TestResponse> => {
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body, text }
}

/** Sends `parts` as `multipart/form-data` (fetch writes the boundary) to `POST /knowledgebases/{kb}/sources`. */
export const uploadForm = async (
  server: TestServer,
  kb: string,
  parts: ReadonlyArray<FormPart>,
  opts: RequestOptions = {}
): Promise<TestResponse> => {
  const form = new FormData()
  for (const part of parts) {
    if ("value" in part) form.append(part.field, part.value)
    else {
      const blob = new Blob([part.file.bytes], part.file.type === undefined ? {} : { type: part.file.type })
      form.append(part.field, blob, part.file.name)
    }
  }
  const headers: Record<string, string> = { ...opts.headers }
  const key = opts.key === undefined ? server.key : opts.key
  if (key !== null) headers.authorization ??= `Bearer ${key}`
  return toTestResponse(await fetch(`${server.baseUrl}/knowledgebases/${kb}/sources`, { method: "POST", headers, body: form }))
}

/** Uploads a file of `fixtures/` (optionally with `name` and `parentPageId` parts). */
export const uploadFixture = (
  server: TestServer,
  kb: string,
  fileName: string,
  extra: { readonly name?: string; readonly parentPageId?: string; readonly type?: string } & RequestOptions = {}
): Promise<TestResponse> =>
  uploadForm(
    server,
    kb,
    [
      { field: "file", file: { name: fileName, bytes: fixtureBytes(fileName), ...(extra.type === undefined ? {} : { type: extra.type }) } },
      ...(extra.name === undefined ? [] : [{ field: "name", value: extra.name }]),
      ...(extra.parentPageId === undefined ? [] : [{ field: "parentPageId", value: extra.parentPageId }])
    ],
    extra
  )

/** Asserts a 202 upload answer and returns its source. */
export const accepted = (response: TestResponse, status: "processing" | "pending_review" | "ready" | "failed" = "processing") => {
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 202, body: { status } })
  return response.body.source as Record<string, any> & { id: string }
}

/** `GET /knowledgebases/{kb}/sources/{id}`. */
export const getSource = (server: TestServer, kb: string, sourceId: string, opts?: RequestOptions) =>
  server.request("GET", `/knowledgebases/${kb}/sources/${sourceId}`, withOptions(opts))

/** Reads a source, expecting 200. */
export const readSource = async (server: TestServer, kb: string, sourceId: string, opts?: RequestOptions) => {
  const response = await getSource(server, kb, sourceId, opts)
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
  return response.body.source as Record<string, any> & { id: string; status: string }
}

/**
 * Polls the source (through the API) until it is no longer `processing`, and returns it. Fails the
 * test with the last state seen after `timeoutMs`.
 */
export const waitForStatus = async (
  server: TestServer,
  kb: string,
  sourceId: string,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number } & RequestOptions = {}
) => {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  for (;;) {
    const source = await readSource(server, kb, sourceId, options)
    if (source.status !== "processing") return source
    if (Date.now() > deadline) {
      throw new Error(`source ${sourceId} still processing after ${options.timeoutMs ?? 20_000} ms: ${JSON.stringify(source)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 40))
  }
}

/** Uploads and waits: the source as it ends up. */
export const readyAfter = async (server: TestServer, kb: string, response: TestResponse, opts?: RequestOptions) => {
  const source = accepted(response)
  return waitForStatus(server, kb, source.id, opts)
}

/** `POST /knowledgebases/{kb}/search`. */
export const search = (server: TestServer, kb: string, body: unknown, opts?: RequestOptions) =>
  server.request("POST", `/knowledgebases/${kb}/search`, { body, ...withOptions(opts) })

/** Document hits for `query` in `kb`. */
export const documentHits = async (server: TestServer, kb: string, query: string, opts?: RequestOptions) => {
  const response = await search(server, kb, { query, kinds: ["documents"], limit: 50 }, opts)
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
  return response.body.results as Array<any>
}

/** Every source of a Knowledgebase through the list endpoint. */
export const listSources = async (server: TestServer, kb: string, opts?: RequestOptions) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/sources?limit=200`, withOptions(opts))
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
  return response.body.sources as Array<any>
}

/** Everything an upload to `kb` could change, read through the API (for "nothing written" checks). */
export const snapshot = async (server: TestServer, kb: string, opts?: RequestOptions) => {
  const sources = await server.request("GET", `/knowledgebases/${kb}/sources?limit=200`, withOptions(opts))
  const detail = await server.request("GET", `/knowledgebases/${kb}`, withOptions(opts))
  const changes = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`, withOptions(opts))
  expect([sources.status, detail.status, changes.status]).toEqual([200, 200, 200])
  return { sources: sources.body, knowledgebase: detail.body, changes: changes.body }
}

/** Runs `refuse` and asserts that `kb` reads exactly as before it (sources, counts, updatedAt, feed). */
export const expectNothingWritten = async (server: TestServer, kb: string, refuse: () => Promise<void>, opts?: RequestOptions) => {
  const before = await snapshot(server, kb, opts)
  await refuse()
  expect(await snapshot(server, kb, opts)).toEqual(before)
}

/** A local HTTP server for `url` sources, recording what it was asked. */
export interface WebServer {
  readonly host: string
  readonly port: number
  readonly origin: string
  readonly requests: Array<{ readonly method: string; readonly url: string }>
  /** TCP connections accepted so far. */
  connections: number
  readonly close: () => Promise<void>
}

/** Starts an HTTP server on `host` (default 127.0.0.1) answering with `handler`. */
export const startWebServer = async (
  handler: (req: IncomingMessage, res: ServerResponse, web: WebServer) => void,
  host = "127.0.0.1"
): Promise<WebServer> => {
  const sockets = new Set<Socket>()
  const requests: Array<{ method: string; url: string }> = []
  let web: WebServer | undefined
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "" })
    handler(req, res, web!)
  })
  server.on("connection", (socket: Socket) => {
    web!.connections++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => {
      const address = server.address()
      if (address === null || typeof address === "string") return reject(new Error("no address"))
      resolve(address.port)
    })
  })
  web = {
    host,
    port,
    origin: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    requests,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  return web
}

/** Row counts of every table an upload writes to (the whole database, every organization). */
export const sourceTableCounts = async (server: TestServer) => {
  const rows = await sql(
    server,
    (db) => db<{ t: string; n: number }>`
      SELECT 'sources' AS t, count(*) AS n FROM sources
      UNION ALL SELECT 'attachments', count(*) FROM knowledgebase_sources
      UNION ALL SELECT 'originals', count(*) FROM source_originals
      UNION ALL SELECT 'jobs', count(*) FROM ingestion_jobs
      UNION ALL SELECT 'passages', count(*) FROM passages
      UNION ALL SELECT 'changes', count(*) FROM changes WHERE object_type = 'source'
      UNION ALL SELECT 'sourcesCount', coalesce(sum(sources_count), 0) FROM knowledgebases`
  )
  const count = (name: string) => rows.find((row) => row.t === name)?.n ?? 0
  return {
    sources: count("sources"),
    attachments: count("attachments"),
    originals: count("originals"),
    jobs: count("jobs"),
    passages: count("passages"),
    changes: count("changes"),
    sourcesCount: count("sourcesCount")
  }
}

/** Runs `refuse` and asserts that no table an upload writes to gained or lost a row. */
export const expectNoSourceRows = async (server: TestServer, refuse: () => Promise<void>) => {
  const before = await sourceTableCounts(server)
  await refuse()
  expect(await sourceTableCounts(server)).toEqual(before)
}

/** The ingestion job of a source, straight from the database (null when there is none). */
export const jobOf = async (server: TestServer, sourceId: string) => {
  const rows = await sql(
    server,
    (db) => db<{ source_id: string; state: string; attempts: number; started_at: string | null; deadline_at: string | null }>`
      SELECT * FROM ingestion_jobs WHERE source_id = ${sourceId}`
  )
  return rows[0] ?? null
}

/**
 * Attaches `count` ready sources to a Knowledgebase straight in the database (as uploads would
 * leave them, without passages), keeping its source count right. For plan-cap tests.
 */
export const insertSources = async (server: TestServer, options: { readonly kb: string; readonly count: number; readonly org?: string }) => {
  const orgId = await organizationId(server, options.org ?? "default")
  const at = "2026-01-01T00:00:00.000Z"
  const rows = Array.from({ length: options.count }, (_, i) => ({
    id: randomUUID(),
    organization_id: orgId,
    knowledgebase_id: options.kb,
    name: `Inserted ${i}`,
    type: "txt",
    status: "ready",
    size_bytes: 1,
    content_sha256: null,
    created_via: "api",
    created_at: at,
    updated_at: at
  }))
  for (let i = 0; i < rows.length; i += 500) {
    const batch = rows.slice(i, i + 500)
    await sql(server, (db) => db`INSERT INTO sources ${db.insert(batch)}`)
    await sql(
      server,
      (db) => db`INSERT INTO knowledgebase_sources ${db.insert(batch.map((row) => ({ knowledgebase_id: options.kb, source_id: row.id, attached_at: at })))}`
    )
  }
  await sql(server, (db) => db`UPDATE knowledgebases SET sources_count = sources_count + ${options.count} WHERE id = ${options.kb}`)
  return rows.map((row) => row.id)
}
