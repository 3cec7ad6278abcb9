/**
 * Sources (documents) in the suites, through the real HTTP server: uploads as JSON (inline text or
 * markdown) and as `multipart/form-data` (through `fetch` and `FormData`), the fixture files,
 * polling a source until it leaves `processing`, search, and everything an upload could change read
 * through the API (for "nothing written" checks). The database-level reads are in
 * `source-rows.ts`, the web stand-in in `web-server.ts`.
 */
import { readFileSync, statSync } from "node:fs"
import { expect } from "vitest"
import type { TestResponse, TestServer } from "./server.js"
import { sleep } from "./timing.js"

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

/** A source as the API answers it. */
export interface SourceJson {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly status: "processing" | "ready" | "failed" | "pending_review"
  readonly searchable: boolean
  readonly disabled: boolean
  readonly url: string | null
  readonly updatedAt: string
  readonly createdAt: string
  readonly sizeBytes: number
  readonly errorMessage: string | null
  readonly createdVia: string
  readonly parentPageId: string | null
}

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

/**
 * Uploads an inline source (`contentText` by default, `contentMarkdown` with `markdown: true`)
 * and returns the 202 answer's source; fails the test unless the upload was accepted.
 */
export const uploadSource = async (
  server: TestServer,
  kb: string,
  input: { name: string; text: string; markdown?: boolean; parentPageId?: string | null; key?: string }
): Promise<{ status: string; source: SourceJson; reviewPath: string | null; deduplicated: boolean }> => {
  const body: Record<string, unknown> = { name: input.name, [input.markdown ? "contentMarkdown" : "contentText"]: input.text }
  if (input.parentPageId !== undefined) body.parentPageId = input.parentPageId
  const response = await uploadJson(server, kb, body, input.key === undefined ? {} : { key: input.key })
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 202 })
  return response.body
}

/** Uploads a file as `multipart/form-data` (the `file` part, typed `application/octet-stream` unless given; optional `name` and `parentPageId`). */
export const uploadFile = (
  server: TestServer,
  kb: string,
  file: { filename: string; bytes: Uint8Array | string; contentType?: string; name?: string; parentPageId?: string },
  key: string = server.key
): Promise<TestResponse> =>
  uploadForm(
    server,
    kb,
    [
      { field: "file", file: { name: file.filename, bytes: file.bytes, type: file.contentType ?? "application/octet-stream" } },
      ...(file.name === undefined ? [] : [{ field: "name", value: file.name }]),
      ...(file.parentPageId === undefined ? [] : [{ field: "parentPageId", value: file.parentPageId }])
    ],
    { key }
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
 * Polls `GET /knowledgebases/{kb}/sources/{id}` (backing off, so the key's rate limit is never
 * met) until the source is no longer `processing`; returns it. Fails the test with the last state
 * seen after `timeoutMs`.
 */
export const waitForSource = async (
  server: TestServer,
  kb: string,
  sourceId: string,
  options: { readonly timeoutMs?: number } & RequestOptions = {}
): Promise<SourceJson & Record<string, any>> => {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  let delay = 5
  for (;;) {
    const source = await readSource(server, kb, sourceId, options)
    if (source.status !== "processing") return source as SourceJson & Record<string, any>
    if (Date.now() > deadline) {
      throw new Error(`source ${sourceId} still processing after ${options.timeoutMs ?? 20_000} ms: ${JSON.stringify(source)}`)
    }
    await sleep(delay)
    delay = Math.min(250, delay * 2)
  }
}

/** Uploads and waits: the source as it ends up. */
export const readyAfter = async (server: TestServer, kb: string, response: TestResponse, opts?: RequestOptions) => {
  const source = accepted(response)
  return waitForSource(server, kb, source.id, opts)
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

/** Uploads an inline source and waits until it is `ready`; returns the ready source. */
export const readySource = async (
  server: TestServer,
  kb: string,
  input: { name: string; text: string; markdown?: boolean; parentPageId?: string | null; key?: string }
): Promise<SourceJson> => {
  const { source } = await uploadSource(server, kb, input)
  const done = await waitForSource(server, kb, source.id, input.key === undefined ? {} : { key: input.key })
  expect({ id: done.id, status: done.status, errorMessage: done.errorMessage }).toEqual({ id: source.id, status: "ready", errorMessage: null })
  return done
}

/** `POST /knowledgebases/{kb}/sources/{id}/move`. */
export const moveSource = (server: TestServer, kb: string, sourceId: string, body: unknown, key?: string) =>
  server.request("POST", `/knowledgebases/${kb}/sources/${sourceId}/move`, { body, ...(key === undefined ? {} : { key }) })
