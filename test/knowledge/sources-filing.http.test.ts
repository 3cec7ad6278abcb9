/**
 * Sources (documents) beyond search: filing with `POST /knowledgebases/{id}/sources/{sourceId}/move`
 * (folders and pages of the same Knowledgebase, null unfiles, refusals change nothing), the rule
 * that a document lives in one place across the organization (the same bytes uploaded to two
 * Knowledgebases are one document), `svcsource://` mentions (resolved, never filing), and how
 * sources show in the changes feed, the Knowledgebase detail and list, the source list (fields,
 * updatedSince, paging), page reads (`attachedFiles`) and the export (`sources.json`).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, insertKnowledgebases, personalKey, unknownId } from "../support/fixtures.js"
import { isoPattern, uuidPattern } from "../support/patterns.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { changeOf, changesOf, createFolder, createPage, detailOf, readPage } from "../support/knowledge.js"
import { type SourceJson, getSource, moveSource, readySource, uploadFile, uploadJson, uploadSource, waitForSource } from "../support/sources.js"
import { readZipBuffer } from "../support/zip.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())
// Each test starts with a fresh rate-limit window (120 requests per minute per key).
beforeEach(() => server.clock.advance(60_000))

const now = () => new Date(server.clock.now()).toISOString()
/** Moves the clock on by one millisecond and returns the new time. */
const tick = () => {
  server.clock.advance(1)
  return now()
}

let counter = 0
/** Text no other test uploads (the same bytes are the same document across the organization). */
const uniqueText = (label = "Document") => `${label} ${++counter}: the contents of a document, unique to one test (${Math.random()}).`

const newKnowledgebase = async (name = "Filing", org = "default"): Promise<string> =>
  (await insertKnowledgebases(server, { org, count: 1, prefix: name }))[0]!.id
/** The source as read through one Knowledgebase. */
const sourceIn = async (kb: string, sourceId: string): Promise<SourceJson> => {
  const response = await getSource(server, kb, sourceId)
  expect(response.status).toBe(200)
  return response.body.source
}
const listSources = async (kb: string, query = "", key?: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/sources${query}`, key === undefined ? {} : { key })
  return response
}
const allSources = async (kb: string): Promise<Array<SourceJson>> => {
  const response = await listSources(kb, "?limit=200")
  expect(response.status).toBe(200)
  expect(response.body.nextCursor).toBeNull()
  return response.body.sources
}
const feedEntry = (knowledgebaseId: string, id: string, change: string, changedAt: string) => ({
  knowledgebaseId,
  type: "source",
  id,
  change,
  changedAt
})
/** Everything a refused move could touch. */
const snapshot = async (kb: string, sourceId: string, pageIds: ReadonlyArray<string> = []) => ({
  source: await sourceIn(kb, sourceId),
  list: await allSources(kb),
  feed: await changesOf(server, kb),
  detail: await detailOf(server, kb),
  pages: await Promise.all(pageIds.map((id) => readPage(server, kb, id)))
})

describe("POST /knowledgebases/{id}/sources/{sourceId}/move", () => {
  it("files a source in a folder: {ok, source}; the source, list, detail, page read and feed agree", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Manual", text: uniqueText() })
    const folder = await createFolder(server, kb, "Docs")
    const at = tick()
    const response = await moveSource(server, kb, src.id, { parentPageId: folder })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(response.body).toEqual({ ok: true, source: { ...src, parentPageId: folder, updatedAt: at } })
    expect(await sourceIn(kb, src.id)).toEqual(response.body.source)
    expect(await allSources(kb)).toEqual([response.body.source])
    const detail = await detailOf(server, kb)
    expect(detail.sources).toEqual([response.body.source])
    expect(detail.updatedAt).toBe(at)
    expect((await readPage(server, kb, folder)).attachedFiles).toEqual(["Manual"])
    expect(await changeOf(server, kb, src.id)).toEqual(feedEntry(kb, src.id, "moved", at))
  })

  it("files a source under a page (not only a folder)", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Attachment.txt", text: uniqueText() })
    const page = await createPage(server, kb, { title: "Contract", bodyMarkdown: "See the attachment." })
    const response = await moveSource(server, kb, src.id, { parentPageId: page })
    expect(response.status).toBe(200)
    expect(response.body.source.parentPageId).toBe(page)
    expect((await readPage(server, kb, page)).attachedFiles).toEqual(["Attachment.txt"])
  })

  it("moves a filed source to another folder: only the new folder lists it", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Roaming", text: uniqueText() })
    const [first, second] = [await createFolder(server, kb, "First"), await createFolder(server, kb, "Second")]
    expect((await moveSource(server, kb, src.id, { parentPageId: first })).status).toBe(200)
    const at = tick()
    const moved = await moveSource(server, kb, src.id, { parentPageId: second })
    expect(moved.body.source).toMatchObject({ parentPageId: second, updatedAt: at })
    expect((await readPage(server, kb, first)).attachedFiles).toEqual([])
    expect((await readPage(server, kb, second)).attachedFiles).toEqual(["Roaming"])
    expect(await changeOf(server, kb, src.id)).toEqual(feedEntry(kb, src.id, "moved", at))
  })

  it("null unfiles it (back on the Knowledgebase home)", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Homeward", text: uniqueText() })
    const folder = await createFolder(server, kb, "Docs")
    expect((await moveSource(server, kb, src.id, { parentPageId: folder })).status).toBe(200)
    const at = tick()
    const response = await moveSource(server, kb, src.id, { parentPageId: null })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true, source: { ...src, parentPageId: null, updatedAt: at } })
    expect((await sourceIn(kb, src.id)).parentPageId).toBeNull()
    expect((await allSources(kb))[0]?.parentPageId).toBeNull()
    expect((await readPage(server, kb, folder)).attachedFiles).toEqual([])
    expect(await changeOf(server, kb, src.id)).toEqual(feedEntry(kb, src.id, "moved", at))
  })

  it("several sources filed under one page are all listed in attachedFiles, by name", async () => {
    const kb = await newKnowledgebase()
    const folder = await createFolder(server, kb, "Bundle")
    const names = ["a.txt", "b.txt", "c.txt"]
    for (const name of names) {
      const src = await readySource(server, kb, { name, text: uniqueText(name) })
      expect((await moveSource(server, kb, src.id, { parentPageId: folder })).status).toBe(200)
      tick()
    }
    expect((await readPage(server, kb, folder)).attachedFiles).toEqual(names)
    // A folder's children listing and attachedFiles are separate: no source appears as a child page.
    expect((await readPage(server, kb, folder)).children).toEqual([])
  })

  describe("refusals change nothing", () => {
    it("a page or folder of another Knowledgebase is 404 not_found", async () => {
      const [kb, other] = [await newKnowledgebase(), await newKnowledgebase()]
      const src = await readySource(server, kb, { name: "Stay", text: uniqueText() })
      const folder = await createFolder(server, kb, "Here")
      expect((await moveSource(server, kb, src.id, { parentPageId: folder })).status).toBe(200)
      const foreignFolder = await createFolder(server, other, "There")
      const foreignPage = await createPage(server, other, { title: "There page" })
      const before = await snapshot(kb, src.id, [folder])
      const otherFeed = await changesOf(server, other)
      tick()
      expectError(await moveSource(server, kb, src.id, { parentPageId: foreignFolder }), 404, "not_found")
      expectError(await moveSource(server, kb, src.id, { parentPageId: foreignPage }), 404, "not_found")
      expectError(await moveSource(server, kb, src.id, { parentPageId: unknownId() }), 404, "not_found")
      expect(await snapshot(kb, src.id, [folder])).toEqual(before)
      expect(await changesOf(server, other)).toEqual(otherFeed)
      expect((await readPage(server, other, foreignFolder)).attachedFiles).toEqual([])
    })

    it("an unknown source, or a source of another Knowledgebase, is 404 not_found", async () => {
      const [kb, other] = [await newKnowledgebase(), await newKnowledgebase()]
      const folder = await createFolder(server, kb, "Here")
      const theirs = await readySource(server, other, { name: "Theirs", text: uniqueText() })
      const before = await snapshot(other, theirs.id)
      tick()
      expectError(await moveSource(server, kb, unknownId(), { parentPageId: folder }), 404, "not_found")
      expectError(await moveSource(server, kb, theirs.id, { parentPageId: folder }), 404, "not_found")
      expectError(await moveSource(server, kb, theirs.id, { parentPageId: null }), 404, "not_found")
      expectError(await moveSource(server, kb, "not-a-uuid", { parentPageId: null }), 404, "not_found")
      expect(await snapshot(other, theirs.id)).toEqual(before)
      expect((await readPage(server, kb, folder)).attachedFiles).toEqual([])
    })

    it("an unknown Knowledgebase or another organization's is 404 not_found", async () => {
      const kb = await newKnowledgebase()
      const src = await readySource(server, kb, { name: "Mine", text: uniqueText() })
      const otherKey = await server.createOrganization(`filing-other-${++counter}`)
      const theirKb = (await server.request("POST", "/knowledgebases", { body: { name: "Theirs" }, key: otherKey })).body.knowledgebase.id
      const theirFolder = await createPage(server, theirKb, { title: "Their folder", templateKey: "folder" }, otherKey)
      const before = await snapshot(kb, src.id)
      expectError(await moveSource(server, unknownId(), src.id, { parentPageId: null }), 404, "not_found")
      expectError(await moveSource(server, theirKb, src.id, { parentPageId: null }), 404, "not_found")
      // Their key cannot reach our source through their Knowledgebase or ours.
      expectError(await moveSource(server, theirKb, src.id, { parentPageId: theirFolder }, otherKey), 404, "not_found")
      expectError(await moveSource(server, kb, src.id, { parentPageId: null }, otherKey), 404, "not_found")
      expect(await snapshot(kb, src.id)).toEqual(before)
    })

    const badBodies: Array<[string, unknown]> = [
      ["an unknown property", { parentPageId: null, name: "x" }],
      ["no parentPageId", {}],
      ["a parentPageId that is not a uuid", { parentPageId: "Docs" }],
      ["a parentPageId that is a number", { parentPageId: 7 }],
      ["a body that is not an object", [null]],
      ["malformed JSON", "{nope"]
    ]
    it.each(badBodies)("refuses %s with 400 invalid_request", async (_name, body) => {
      const kb = await newKnowledgebase()
      const src = await readySource(server, kb, { name: "Steady", text: uniqueText() })
      const before = await snapshot(kb, src.id)
      tick()
      expectError(await moveSource(server, kb, src.id, body), 400, "invalid_request")
      expect(await snapshot(kb, src.id)).toEqual(before)
    })

    it("names the unknown property", async () => {
      const kb = await newKnowledgebase()
      const src = await readySource(server, kb, { name: "Named", text: uniqueText() })
      const message = expectError(await moveSource(server, kb, src.id, { parentPageId: null, folderName: "x" }), 400, "invalid_request")
      expect(message).toContain("folderName")
    })

    it("needs knowledge:write (a read-only key, a viewer's personal key)", async () => {
      const kb = await newKnowledgebase()
      const src = await readySource(server, kb, { name: "Guarded", text: uniqueText() })
      const folder = await createFolder(server, kb, "Docs")
      const reader = await server.createKey({ name: `reader ${++counter}`, scopes: ["knowledge:read"] })
      const viewer = await personalKey(server, { email: `viewer${counter}@example.com`, role: "viewer" })
      const before = await snapshot(kb, src.id, [folder])
      expectError(await moveSource(server, kb, src.id, { parentPageId: folder }, reader), 403, "insufficient_scope")
      expectError(await moveSource(server, kb, src.id, { parentPageId: folder }, viewer), 403, "insufficient_scope")
      expect(await snapshot(kb, src.id, [folder])).toEqual(before)
      // A member's personal key may file.
      const member = await personalKey(server, { email: `member${counter}@example.com`, role: "member" })
      expect((await moveSource(server, kb, src.id, { parentPageId: folder }, member)).status).toBe(200)
    })
  })

  it("unfiling an unfiled source changes nothing and adds no feed entry", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Unfiled", text: uniqueText() })
    const before = await snapshot(kb, src.id)
    tick()
    const response = await moveSource(server, kb, src.id, { parentPageId: null })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true, source: before.source })
    expect(await snapshot(kb, src.id)).toEqual(before)
  })
})

describe("uploading into a folder", () => {
  it("parentPageId on upload files the source there at once", async () => {
    const kb = await newKnowledgebase()
    const folder = await createFolder(server, kb, "Inbox")
    const at = tick()
    const uploaded = await uploadSource(server, kb, { name: "Filed.md", text: `# Filed\n\n${uniqueText()}`, markdown: true, parentPageId: folder })
    expect(uploaded.status).toBe("processing")
    expect(uploaded.source).toMatchObject({ parentPageId: folder, status: "processing", type: "md", createdAt: at })
    // Created, or already ready (indexing is quick): the entry is this source's, at the upload's time.
    expect(await changeOf(server, kb, uploaded.source.id)).toEqual({
      ...feedEntry(kb, uploaded.source.id, "created", at),
      change: expect.stringMatching(/^(created|ready)$/)
    })
    const ready = await waitForSource(server, kb, uploaded.source.id)
    expect(ready).toMatchObject({ status: "ready", parentPageId: folder })
    expect((await readPage(server, kb, folder)).attachedFiles).toEqual(["Filed.md"])
  })

  it("a parentPageId of another Knowledgebase is 404 and nothing is written", async () => {
    const [kb, other] = [await newKnowledgebase(), await newKnowledgebase()]
    const foreign = await createFolder(server, other, "Elsewhere")
    const before = { list: await allSources(kb), feed: await changesOf(server, kb), detail: await detailOf(server, kb) }
    tick()
    expectError(await uploadJson(server, kb, { name: "Lost", contentText: uniqueText(), parentPageId: foreign }), 404, "not_found")
    expectError(await uploadJson(server, kb, { name: "Lost", contentText: uniqueText(), parentPageId: unknownId() }), 404, "not_found")
    expect({ list: await allSources(kb), feed: await changesOf(server, kb), detail: await detailOf(server, kb) }).toEqual(before)
    expect((await readPage(server, other, foreign)).attachedFiles).toEqual([])
  })
})

describe("a document lives in one place across the organization", () => {
  it("the same bytes uploaded to two Knowledgebases are one document (same id), attached to both", async () => {
    const [a, b] = [await newKnowledgebase("A"), await newKnowledgebase("B")]
    const text = uniqueText("Shared")
    const src = await readySource(server, a, { name: "Shared.txt", text })
    const at = tick()
    const again = await uploadSource(server, b, { name: "Shared copy.txt", text })
    expect(again.source.id).toBe(src.id)
    expect(again.status).toBe("ready")
    expect(again.source).toMatchObject({ id: src.id, status: "ready", searchable: true, parentPageId: null })
    expect((await sourceIn(b, src.id)).id).toBe(src.id)
    expect((await allSources(b)).map((s) => s.id)).toEqual([src.id])
    expect((await detailOf(server, b)).counts.sources).toBe(1)
    expect(await changeOf(server, b, src.id)).toEqual(feedEntry(b, src.id, "created", at))
    // Uploading it again where it already is changes nothing.
    const countA = (await detailOf(server, a)).counts.sources
    const third = await uploadSource(server, a, { name: "Shared.txt", text })
    expect(third.source.id).toBe(src.id)
    expect((await detailOf(server, a)).counts.sources).toBe(countA)
    expect(await allSources(a)).toHaveLength(1)
  })

  it("an upload of bytes already held says deduplicated: true and answers the document under its first name", async () => {
    const [a, b] = [await newKnowledgebase("A"), await newKnowledgebase("B")]
    const text = uniqueText("Receipts")
    const first = await uploadSource(server, a, { name: "Receipts.txt", text })
    expect(first.deduplicated).toBe(false)
    await waitForSource(server, a, first.source.id)
    const elsewhere = await uploadSource(server, b, { name: "Expense receipts.txt", text })
    expect(elsewhere).toMatchObject({ deduplicated: true, status: "ready", source: { id: first.source.id, name: "Receipts.txt" } })
    const here = await uploadSource(server, a, { name: "Renamed.txt", text })
    expect(here).toMatchObject({ deduplicated: true, source: { id: first.source.id, name: "Receipts.txt" } })
    const other = await uploadSource(server, a, { name: "Other.txt", text: uniqueText("Other") })
    expect(other.deduplicated).toBe(false)
    const file = await uploadFile(server, b, { filename: "again.txt", bytes: text, contentType: "text/plain" })
    expect({ status: file.status, body: file.body }).toMatchObject({ status: 202, body: { deduplicated: true, source: { id: first.source.id } } })
  })

  it("filing it in B's folder moves it out of A's folder; both feeds show it moved", async () => {
    const [a, b] = [await newKnowledgebase("A"), await newKnowledgebase("B")]
    const text = uniqueText("Wanderer")
    const src = await readySource(server, a, { name: "Wanderer.txt", text })
    await uploadSource(server, b, { name: "Wanderer.txt", text })
    const [folderA, folderB] = [await createFolder(server, a, "A docs"), await createFolder(server, b, "B docs")]

    const tA = tick()
    expect((await moveSource(server, a, src.id, { parentPageId: folderA })).body.source.parentPageId).toBe(folderA)
    expect((await sourceIn(a, src.id)).parentPageId).toBe(folderA)
    // Seen from B it is not filed there.
    expect((await sourceIn(b, src.id)).parentPageId).toBeNull()
    expect(await changeOf(server, a, src.id)).toEqual(feedEntry(a, src.id, "moved", tA))

    const tB = tick()
    const moved = await moveSource(server, b, src.id, { parentPageId: folderB })
    expect(moved.status).toBe(200)
    expect(moved.body.source).toMatchObject({ id: src.id, parentPageId: folderB, updatedAt: tB })
    // In A it is unfiled again: listed on A's home, gone from A's folder.
    expect((await sourceIn(a, src.id)).parentPageId).toBeNull()
    expect((await allSources(a)).find((s) => s.id === src.id)?.parentPageId).toBeNull()
    expect((await detailOf(server, a)).sources.find((s: SourceJson) => s.id === src.id)?.parentPageId).toBeNull()
    expect((await readPage(server, a, folderA)).attachedFiles).toEqual([])
    expect((await readPage(server, b, folderB)).attachedFiles).toEqual(["Wanderer.txt"])
    expect((await allSources(b)).find((s) => s.id === src.id)?.parentPageId).toBe(folderB)
    // Both feeds show it moved.
    expect(await changeOf(server, a, src.id)).toEqual(feedEntry(a, src.id, "moved", tB))
    expect(await changeOf(server, b, src.id)).toEqual(feedEntry(b, src.id, "moved", tB))
    const all = (await changesOf(server, "all")).filter((entry) => entry.id === src.id)
    expect(all).toEqual(expect.arrayContaining([feedEntry(a, src.id, "moved", tB), feedEntry(b, src.id, "moved", tB)]))
  })

  it("unfiling it in a Knowledgebase where it is not filed leaves its filing elsewhere untouched", async () => {
    const [a, b] = [await newKnowledgebase("A"), await newKnowledgebase("B")]
    const text = uniqueText("Anchored")
    const src = await readySource(server, a, { name: "Anchored.txt", text })
    await uploadSource(server, b, { name: "Anchored.txt", text })
    const folderA = await createFolder(server, a, "A docs")
    expect((await moveSource(server, a, src.id, { parentPageId: folderA })).status).toBe(200)
    const before = await snapshot(a, src.id, [folderA])
    tick()
    const response = await moveSource(server, b, src.id, { parentPageId: null })
    expect(response.status).toBe(200)
    expect(response.body.source.parentPageId).toBeNull()
    expect(await snapshot(a, src.id, [folderA])).toEqual(before)
  })

  it("uploading the same bytes into a folder of another Knowledgebase files it there and out of the first", async () => {
    const [a, b] = [await newKnowledgebase("A"), await newKnowledgebase("B")]
    const text = uniqueText("Refiled")
    const folderA = await createFolder(server, a, "A docs")
    const src = await readySource(server, a, { name: "Refiled.txt", text, parentPageId: folderA })
    expect(src.parentPageId).toBe(folderA)
    const folderB = await createFolder(server, b, "B docs")
    const at = tick()
    const again = await uploadSource(server, b, { name: "Refiled.txt", text, parentPageId: folderB })
    expect(again.source).toMatchObject({ id: src.id, parentPageId: folderB })
    expect((await sourceIn(a, src.id)).parentPageId).toBeNull()
    expect((await readPage(server, a, folderA)).attachedFiles).toEqual([])
    expect((await readPage(server, b, folderB)).attachedFiles).toEqual(["Refiled.txt"])
    expect(await changeOf(server, a, src.id)).toEqual(feedEntry(a, src.id, "moved", at))
    expect((await changeOf(server, b, src.id))?.changedAt).toBe(at)
  })

  it("the same bytes in another organization are a separate document; its id does not resolve here", async () => {
    const kb = await newKnowledgebase("Ours")
    const text = uniqueText("Tenant")
    const ours = await readySource(server, kb, { name: "Tenant.txt", text })
    const otherKey = await server.createOrganization(`bytes-other-${++counter}`)
    const theirKb = (await server.request("POST", "/knowledgebases", { body: { name: "Theirs" }, key: otherKey })).body.knowledgebase.id
    const theirs = await readySource(server, theirKb, { name: "Tenant.txt", text, key: otherKey })
    expect(theirs.id).not.toBe(ours.id)
    expectError(await getSource(server, theirKb, ours.id, { key: otherKey }), 404, "not_found")
    expectError(await moveSource(server, kb, theirs.id, { parentPageId: null }), 404, "not_found")
    const mention = await server.request("POST", `/knowledgebases/${kb}/pages`, {
      body: { title: "Foreign mention", bodyMarkdown: `[theirs](svcsource://${theirs.id}) and [ours](svcsource://${ours.id})` }
    })
    expect(mention.status).toBe(201)
    expect(mention.body.links).toEqual({
      pages: [],
      sources: [{ id: ours.id, name: "Tenant.txt" }],
      unresolved: [{ kind: "source", id: theirs.id }]
    })
  })

  it("search cites the Knowledgebase searched; `all` finds the shared document once", async () => {
    const [a, b] = [await newKnowledgebase("A"), await newKnowledgebase("B")]
    const marker = `sharedmarker${++counter}qz`
    const text = `A shared document about ${marker}.`
    const src = await readySource(server, a, { name: "Shared search", text })
    await uploadSource(server, b, { name: "Shared search", text })
    const inB = await server.request("POST", `/knowledgebases/${b}/search`, { body: { query: marker, kinds: ["documents"] } })
    expect(inB.status).toBe(200)
    expect(inB.body.results.map((r: any) => [r.citation.sourceId, r.citation.knowledgebaseId])).toEqual([[src.id, b]])
    const inAll = await server.request("POST", "/knowledgebases/all/search", { body: { query: marker, kinds: ["documents"] } })
    expect(inAll.body.results.map((r: any) => r.citation.sourceId)).toEqual([src.id])
  })

  it("an svcsource:// mention in a page of B resolves in links.sources and does not change the filing", async () => {
    const [a, b, c] = [await newKnowledgebase("A"), await newKnowledgebase("B"), await newKnowledgebase("C")]
    const text = uniqueText("Mentioned")
    const src = await readySource(server, a, { name: "Mentioned.pdf", text })
    await uploadSource(server, b, { name: "Mentioned.pdf", text })
    const folderA = await createFolder(server, a, "A docs")
    expect((await moveSource(server, a, src.id, { parentPageId: folderA })).status).toBe(200)
    const before = { a: await snapshot(a, src.id, [folderA]), b: await sourceIn(b, src.id) }

    tick()
    const body = `See [the manual](svcsource://${src.id}) for details.`
    const created = await server.request("POST", `/knowledgebases/${b}/pages`, { body: { title: "Mentions", bodyMarkdown: body } })
    expect(created.status).toBe(201)
    expect(created.body.links).toEqual({ pages: [], sources: [{ id: src.id, name: "Mentioned.pdf" }], unresolved: [] })
    const patched = await server.request("PATCH", `/knowledgebases/${b}/pages/${created.body.page.id}`, {
      body: { patch: [{ op: "append", text: `\n\nAgain: [manual](svcsource://${src.id})` }] }
    })
    expect(patched.status).toBe(200)
    expect(patched.body.links.sources).toEqual([{ id: src.id, name: "Mentioned.pdf" }])
    // Filing is untouched everywhere, and the mentioning page lists no attached file.
    expect(await snapshot(a, src.id, [folderA])).toEqual(before.a)
    expect(await sourceIn(b, src.id)).toEqual(before.b)
    expect((await readPage(server, b, created.body.page.id)).attachedFiles).toEqual([])

    // In a Knowledgebase the document is not attached to, the mention is unresolved.
    const elsewhere = await server.request("POST", `/knowledgebases/${c}/pages`, { body: { title: "Stale", bodyMarkdown: body } })
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.body.links).toEqual({ pages: [], sources: [], unresolved: [{ kind: "source", id: src.id }] })
  })
})

describe("sources in the changes feed", () => {
  it("an upload appears as created, then ready once indexed", async () => {
    const kb = await newKnowledgebase()
    const at = tick()
    const uploaded = await uploadSource(server, kb, { name: "Fresh", text: uniqueText() })
    const ofSource = (entries: Array<any>) => entries.filter((entry) => entry.id === uploaded.source.id)
    // Indexing may already be done; either way the first entry is this source's creation.
    expect(ofSource(await changesOf(server, kb))[0]).toEqual(feedEntry(kb, uploaded.source.id, "created", at))
    const ready = await waitForSource(server, kb, uploaded.source.id)
    expect(ready.status).toBe("ready")
    expect(ready.searchable).toBe(true)
    const both = [feedEntry(kb, uploaded.source.id, "created", at), feedEntry(kb, uploaded.source.id, "ready", at)]
    expect(ofSource(await changesOf(server, kb))).toEqual(both)
    expect(ofSource(await changesOf(server, "all"))).toEqual(both)
  })

  it("a source waiting for review appears as created", async () => {
    const kb = await newKnowledgebase()
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["review"] })))
    let uploaded: Awaited<ReturnType<typeof uploadSource>>
    const at = tick()
    try {
      uploaded = await uploadSource(server, kb, { name: "Reviewed", text: uniqueText() })
    } finally {
      await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["review"] })))
    }
    expect(uploaded.status).toBe("pending_review")
    expect(uploaded.reviewPath).toEqual(expect.any(String))
    expect(await changeOf(server, kb, uploaded.source.id)).toEqual(feedEntry(kb, uploaded.source.id, "created", at))
    expect((await sourceIn(kb, uploaded.source.id)).status).toBe("pending_review")
  })

  it("a failed upload appears as failed, with its errorMessage on the source", async () => {
    const kb = await newKnowledgebase()
    const at = tick()
    const response = await uploadFile(server, kb, { filename: "broken.pdf", bytes: `not a pdf ${uniqueText()}`, contentType: "application/pdf" })
    expect(response.status).toBe(202)
    const failed = await waitForSource(server, kb, response.body.source.id)
    expect(failed).toMatchObject({ status: "failed", searchable: false, type: "pdf", errorMessage: expect.any(String) })
    expect(failed.errorMessage!.length).toBeGreaterThan(0)
    expect(await changeOf(server, kb, failed.id)).toEqual(feedEntry(kb, failed.id, "failed", at))
  })

  it("a move appears as moved; the feed keeps every change of the source, in order", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Mover", text: uniqueText() })
    const folder = await createFolder(server, kb, "Docs")
    const t1 = tick()
    await moveSource(server, kb, src.id, { parentPageId: folder })
    const t2 = tick()
    await moveSource(server, kb, src.id, { parentPageId: null })
    const entries = (await changesOf(server, kb)).filter((entry) => entry.id === src.id)
    expect(entries.map((entry) => entry.change)).toEqual(["created", "ready", "moved", "moved"])
    expect(entries.slice(2)).toEqual([feedEntry(kb, src.id, "moved", t1), feedEntry(kb, src.id, "moved", t2)])
    // Oldest first: the source's creation and indexing, the folder, then the two moves.
    expect((await changesOf(server, kb)).map((entry) => entry.id)).toEqual([src.id, src.id, folder, src.id, src.id])
  })
})

describe("sources in the Knowledgebase detail and list", () => {
  it("the detail carries Source objects and counts.sources; the list counts them too", async () => {
    const kb = await newKnowledgebase("Counted")
    const text = uniqueText("Counted")
    const t0 = tick()
    const txt = await readySource(server, kb, { name: "Plain", text })
    const t1 = tick()
    const md = await readySource(server, kb, { name: "Marked", text: `# Heading\n\n${uniqueText()}`, markdown: true })
    expect(txt).toEqual({
      id: expect.stringMatching(uuidPattern),
      name: "Plain",
      type: "txt",
      status: "ready",
      searchable: true,
      disabled: false,
      url: null,
      updatedAt: t0,
      createdAt: t0,
      sizeBytes: Buffer.byteLength(text),
      errorMessage: null,
      createdVia: "api",
      parentPageId: null
    })
    expect(md).toMatchObject({ type: "md", createdAt: t1, status: "ready" })
    const detail = await detailOf(server, kb)
    expect(detail.sources).toEqual([txt, md])
    expect(detail.counts).toEqual({ sources: 2, pages: 0 })
    let listed: any = null
    let cursor: string | null = null
    do {
      const query: string = `/knowledgebases?limit=200${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      const page = await server.request("GET", query)
      expect(page.status).toBe(200)
      listed ??= page.body.knowledgebases.find((k: any) => k.id === kb) ?? null
      cursor = page.body.nextCursor
    } while (cursor !== null)
    expect(listed.counts).toEqual({ sources: 2, pages: 0 })
    expect(listed).not.toHaveProperty("sources")
  })

  it("sizeBytes counts UTF-8 bytes", async () => {
    const kb = await newKnowledgebase()
    const text = `Ünïcödé — ${uniqueText()} 東京`
    const src = await readySource(server, kb, { name: "Bytes", text })
    expect(src.sizeBytes).toBe(Buffer.byteLength(text, "utf8"))
  })
})

describe("GET /knowledgebases/{id}/sources", () => {
  it("answers {knowledgebaseId, sources, nextCursor}, oldest first, never with file bodies", async () => {
    const kb = await newKnowledgebase()
    const texts = [uniqueText("Body one"), uniqueText("Body two")]
    const first = await readySource(server, kb, { name: "One", text: texts[0]! })
    tick()
    const second = await readySource(server, kb, { name: "Two", text: texts[1]! })
    const response = await listSources(kb)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ knowledgebaseId: kb, sources: [first, second], nextCursor: null })
    for (const text of texts) expect(response.text).not.toContain(text)
    for (const text of texts) expect((await getSource(server, kb, first.id)).text).not.toContain(text)
  })

  it("fields narrows each source; an unknown field is 400 invalid_request", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Narrow", text: uniqueText() })
    const narrow = await listSources(kb, "?fields=id,name,status")
    expect(narrow.status).toBe(200)
    expect(narrow.body.sources).toEqual([{ id: src.id, name: "Narrow", status: "ready" }])
    const every = "id,name,type,status,searchable,disabled,url,updatedAt,createdAt,sizeBytes,errorMessage,createdVia"
    const wide = await listSources(kb, `?fields=${every}`)
    expect(wide.status).toBe(200)
    expect(Object.keys(wide.body.sources[0]).sort()).toEqual(every.split(",").sort())
    expectError(await listSources(kb, "?fields=bogus"), 400, "invalid_request")
    const message = expectError(await listSources(kb, "?fields=id,contents"), 400, "invalid_request")
    expect(message).toContain("contents")
    expectError(await listSources(kb, "?fields="), 400, "invalid_request")
  })

  it("updatedSince keeps sources changed at or after the time (inclusive), a move counting as a change", async () => {
    const kb = await newKnowledgebase()
    const old = await readySource(server, kb, { name: "Old", text: uniqueText() })
    const t1 = tick()
    const fresh = await readySource(server, kb, { name: "Fresh", text: uniqueText() })
    const ids = async (since: string) => {
      const response = await listSources(kb, `?updatedSince=${encodeURIComponent(since)}`)
      expect(response.status).toBe(200)
      return response.body.sources.map((s: SourceJson) => s.id)
    }
    expect(await ids(t1)).toEqual([fresh.id])
    expect(await ids(old.updatedAt)).toEqual([old.id, fresh.id])
    expect(await ids("2999-01-01T00:00:00Z")).toEqual([])
    // An offset is normalized to UTC.
    const plusTwo = new Date(Date.parse(t1) + 2 * 3_600_000).toISOString().replace("Z", "+02:00")
    expect(await ids(plusTwo)).toEqual([fresh.id])
    const folder = await createFolder(server, kb, "Docs")
    const t2 = tick()
    expect((await moveSource(server, kb, old.id, { parentPageId: folder })).status).toBe(200)
    expect(await ids(t2)).toEqual([old.id])
    expectError(await listSources(kb, "?updatedSince=yesterday"), 400, "invalid_request")
  })

  it("updatedSince includes a document newly attached to this Knowledgebase (the same bytes uploaded here later)", async () => {
    const [a, b] = [await newKnowledgebase("A"), await newKnowledgebase("B")]
    const text = uniqueText("Late arrival")
    const src = await readySource(server, a, { name: "Late.txt", text })
    server.clock.advance(5_000)
    const attachedAt = now()
    expect((await uploadSource(server, b, { name: "Late.txt", text })).source.id).toBe(src.id)
    // B's feed says it arrived at attachedAt; a client syncing B's sources since then must see it.
    expect(await changeOf(server, b, src.id)).toEqual(feedEntry(b, src.id, "created", attachedAt))
    const response = await listSources(b, `?updatedSince=${encodeURIComponent(attachedAt)}`)
    expect(response.status).toBe(200)
    expect(response.body.sources.map((s: SourceJson) => s.id)).toEqual([src.id])
  })

  it("pages with limit and cursor; bad limits and foreign cursors are 400", async () => {
    const [kb, other] = [await newKnowledgebase(), await newKnowledgebase()]
    const made: Array<string> = []
    for (let i = 0; i < 5; i++) {
      tick()
      made.push((await uploadSource(server, kb, { name: `S${i}`, text: uniqueText(`S${i}`) })).source.id)
    }
    await readySource(server, other, { name: "Other", text: uniqueText() })
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const query: string = `?limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      const response = await listSources(kb, query)
      expect(response.status).toBe(200)
      expect(response.body.sources.length).toBeLessThanOrEqual(2)
      seen.push(...response.body.sources.map((s: SourceJson) => s.id))
      cursor = response.body.nextCursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual(made)
    const first = await listSources(kb, "?limit=2")
    expectError(await listSources(other, `?cursor=${encodeURIComponent(first.body.nextCursor)}`), 400, "invalid_request")
    expectError(await listSources(kb, "?cursor=garbage"), 400, "invalid_request")
    for (const limit of ["0", "201", "1.5", "x"]) expectError(await listSources(kb, `?limit=${limit}`), 400, "invalid_request")
    expect((await listSources(kb, "?limit=200")).status).toBe(200)
    expectError(await listSources(kb, "?sort=name"), 400, "invalid_request")
    for (const id of made) await waitForSource(server, kb, id)
  })

  it("is 404 for an unknown Knowledgebase or another organization's; a source outside the Knowledgebase is 404", async () => {
    const [kb, other] = [await newKnowledgebase(), await newKnowledgebase()]
    const src = await readySource(server, other, { name: "Elsewhere", text: uniqueText() })
    expectError(await listSources(unknownId()), 404, "not_found")
    expectError(await getSource(server, kb, src.id), 404, "not_found")
    expectError(await getSource(server, kb, unknownId()), 404, "not_found")
    const otherKey = await server.createOrganization(`sources-other-${++counter}`)
    expectError(await listSources(kb, "", otherKey), 404, "not_found")
    expectError(await getSource(server, other, src.id, { key: otherKey }), 404, "not_found")
  })
})

describe("the export's sources.json", () => {
  it("lists {id, name, type, status, sizeBytes, createdAt, updatedAt, parentPageId} and never file bodies", async () => {
    const [kb, b] = [await newKnowledgebase("Exported"), await newKnowledgebase("Exported B")]
    const folder = await createFolder(server, kb, "Docs")
    const bodyText = uniqueText("Secret body")
    const filed = await readySource(server, kb, { name: "Filed", text: bodyText, parentPageId: folder })
    const plainText = uniqueText("Other body")
    tick()
    const plain = await readySource(server, kb, { name: "Plain", text: plainText })
    const response = await fetch(`${server.baseUrl}/knowledgebases/${kb}/export`, { headers: { authorization: `Bearer ${server.key}` } })
    expect(response.status).toBe(200)
    const entries = await readZipBuffer(Buffer.from(await response.arrayBuffer()))
    const sources = JSON.parse(entries.find((entry) => entry.name === "sources.json")!.data.toString("utf8"))
    const shape = (s: SourceJson) => ({
      id: s.id,
      name: s.name,
      type: s.type,
      status: s.status,
      sizeBytes: s.sizeBytes,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      parentPageId: s.parentPageId
    })
    expect(sources).toEqual([shape(filed), shape(plain)])
    expect(sources[0].parentPageId).toBe(folder)
    for (const entry of entries) {
      const text = entry.data.toString("utf8")
      expect(text, entry.name).not.toContain(bodyText)
      expect(text, entry.name).not.toContain(plainText)
    }
    const manifest = JSON.parse(entries.find((entry) => entry.name === "manifest.json")!.data.toString("utf8"))
    expect(manifest.counts).toMatchObject({ sources: 2 })

    // Seen from another Knowledgebase it is attached to, the document is not filed there.
    await uploadSource(server, b, { name: "Filed", text: bodyText })
    const fromB = await fetch(`${server.baseUrl}/knowledgebases/${b}/export`, { headers: { authorization: `Bearer ${server.key}` } })
    const bEntries = await readZipBuffer(Buffer.from(await fromB.arrayBuffer()))
    const bSources = JSON.parse(bEntries.find((entry) => entry.name === "sources.json")!.data.toString("utf8"))
    expect(bSources).toEqual([{ ...shape(filed), parentPageId: null }])
  })
})

describe("timestamps", () => {
  it("sources carry ISO 8601 timestamps in UTC with milliseconds", async () => {
    const kb = await newKnowledgebase()
    const src = await readySource(server, kb, { name: "Times", text: uniqueText() })
    expect(src.createdAt).toMatch(isoPattern)
    expect(src.updatedAt).toMatch(isoPattern)
  })
})
