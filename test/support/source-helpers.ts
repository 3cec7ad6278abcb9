/**
 * Sources (documents) in the HTTP suites: upload inline JSON sources or multipart files, poll a
 * source until indexing has finished, and small reads (changes feed, detail, page) the source
 * suites share. Everything goes through the real HTTP server.
 */
import { Effect } from "effect"
import { expect } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import type { TestResponse, TestServer } from "./server.js"
import { toTestResponse } from "./sources.js"
import { sleep } from "./timing.js"

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

const withKey = (key: string | undefined) => (key === undefined ? {} : { key })

/** `POST /knowledgebases/{kb}/sources` with a JSON body, as sent. */
export const postSource = (server: TestServer, kb: string, body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) =>
  server.request("POST", `/knowledgebases/${kb}/sources`, {
    body,
    ...withKey(options.key),
    ...(options.headers === undefined ? {} : { headers: options.headers })
  })

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
  const response = await postSource(server, kb, body, withKey(input.key))
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 202 })
  return response.body
}

/** Uploads a file as `multipart/form-data` (the `file` part, optional `name` and `parentPageId`). */
export const uploadFile = async (
  server: TestServer,
  kb: string,
  file: { filename: string; bytes: Uint8Array | string; contentType?: string; name?: string; parentPageId?: string },
  key: string = server.key
): Promise<TestResponse> => {
  const form = new FormData()
  const bytes = typeof file.bytes === "string" ? new TextEncoder().encode(file.bytes) : file.bytes
  form.append("file", new Blob([bytes], { type: file.contentType ?? "application/octet-stream" }), file.filename)
  if (file.name !== undefined) form.append("name", file.name)
  if (file.parentPageId !== undefined) form.append("parentPageId", file.parentPageId)
  const response = await fetch(`${server.baseUrl}/knowledgebases/${kb}/sources`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form
  })
  return toTestResponse(response)
}

/** `GET /knowledgebases/{kb}/sources/{id}`. */
export const getSource = (server: TestServer, kb: string, sourceId: string, key?: string) =>
  server.request("GET", `/knowledgebases/${kb}/sources/${sourceId}`, withKey(key))


/**
 * Polls `GET /knowledgebases/{kb}/sources/{id}` (backing off, so the key's rate limit is never
 * met) until the source is no longer `processing`; returns it. Fails the test after `timeoutMs`.
 */
export const waitForSource = async (
  server: TestServer,
  kb: string,
  sourceId: string,
  options: { key?: string; timeoutMs?: number } = {}
): Promise<SourceJson> => {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  let delay = 5
  for (;;) {
    const response = await getSource(server, kb, sourceId, options.key)
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
    const source = response.body.source as SourceJson
    if (source.status !== "processing") return source
    if (Date.now() > deadline) throw new Error(`source ${sourceId} still processing after ${options.timeoutMs ?? 20_000} ms`)
    await sleep(delay)
    delay = Math.min(250, delay * 2)
  }
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
  server.request("POST", `/knowledgebases/${kb}/sources/${sourceId}/move`, { body, ...withKey(key) })

/** Every entry of a Knowledgebase's (or `all`'s) changes feed, in one page. */
export const changesOf = async (server: TestServer, kb: string, key?: string): Promise<Array<any>> => {
  const response = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`, withKey(key))
  expect(response.status).toBe(200)
  expect(response.body.nextCursor).toBeNull()
  return response.body.changes
}

/** The latest feed entry of one object, if any (the feed keeps every change). */
export const changeOf = async (server: TestServer, kb: string, id: string) =>
  (await changesOf(server, kb)).filter((entry) => entry.id === id).at(-1)

/** `GET /knowledgebases/{kb}`'s knowledgebase. */
export const detailOf = async (server: TestServer, kb: string, key?: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}`, withKey(key))
  expect(response.status).toBe(200)
  return response.body.knowledgebase
}

/** Creates a page (or folder) and returns its id; fails the test unless 201. */
export const createPage = async (server: TestServer, kb: string, body: Record<string, unknown>, key?: string): Promise<string> => {
  const response = await server.request("POST", `/knowledgebases/${kb}/pages`, { body, ...withKey(key) })
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 201 })
  return response.body.page.id
}

/** Creates a folder and returns its id. */
export const createFolder = (server: TestServer, kb: string, title: string, parentPageId?: string) =>
  createPage(server, kb, { title, templateKey: "folder", ...(parentPageId === undefined ? {} : { parentPageId }) })

/** `GET /knowledgebases/{kb}/pages/{id}`'s page. */
export const readPage = async (server: TestServer, kb: string, pageId: string, key?: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/pages/${pageId}`, withKey(key))
  expect(response.status).toBe(200)
  return response.body.page
}

/** The organization as the admin sees it (credits left and used). */
export const organizationOf = (server: TestServer, slug = "default") =>
  server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.organization(slug)))

/** Sets the credits an organization has left. */
export const setCredits = (server: TestServer, credits: number, slug = "default") =>
  server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, { credits })))
