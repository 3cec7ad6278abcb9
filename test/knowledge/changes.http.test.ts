/**
 * `GET /knowledgebases/{id}/changes`: one entry per change of a page or folder (every change is
 * kept: a page created then patched shows both), oldest first; `since` (inclusive) or `cursor` paging; `all` across the organization's
 * Knowledgebases and never another organization's; refused writes add nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, insertKnowledgebases, unknownId } from "../support/fixtures.js"
import { uploadSource, waitForSource } from "../support/sources.js"
import { startTestServer, type TestServer } from "../support/server.js"

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

let orgCounter = 0
/** A fresh organization with an all-scopes key. */
const newOrganization = async () => {
  const slug = `changes-org-${++orgCounter}`
  return { slug, key: await server.createOrganization(slug) }
}
const newKnowledgebase = async (org = "default", name = "Feed"): Promise<string> =>
  (await insertKnowledgebases(server, { org, count: 1, prefix: name }))[0]!.id

const feed = (id: string, query = "", key?: string) =>
  server.request("GET", `/knowledgebases/${id}/changes${query}`, key === undefined ? {} : { key })
/** The whole feed in one page. */
const entries = async (id: string, key?: string) => {
  const response = await feed(id, "?limit=200", key)
  expect(response.status).toBe(200)
  expect(response.body.nextCursor).toBeNull()
  return response.body.changes as Array<any>
}
/** Walks the feed with `limit`, returning every entry and the number of pages. */
const walk = async (id: string, limit: number, key?: string) => {
  const all: Array<any> = []
  let pages = 0
  let cursor: string | null = null
  do {
    const query: string = `?limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const response = await feed(id, query, key)
    expect(response.status).toBe(200)
    expect(response.body.changes.length).toBeLessThanOrEqual(limit)
    all.push(...response.body.changes)
    cursor = response.body.nextCursor
    pages++
  } while (cursor !== null)
  return { all, pages }
}

const createPage = async (kb: string, body: Record<string, unknown>, key?: string) => {
  const response = await server.request("POST", `/knowledgebases/${kb}/pages`, { body, ...(key === undefined ? {} : { key }) })
  expect(response.status).toBe(201)
  return response.body.page as { id: string }
}
const patchPage = (kb: string, pageId: string, body: unknown, key?: string) =>
  server.request("PATCH", `/knowledgebases/${kb}/pages/${pageId}`, { body, ...(key === undefined ? {} : { key }) })
const movePage = (kb: string, pageId: string, parentPageId: string | null) =>
  server.request("POST", `/knowledgebases/${kb}/pages/${pageId}/move`, { body: { parentPageId } })
const appendPage = (kb: string, pageId: string, text: string) =>
  server.request("POST", `/knowledgebases/${kb}/pages/${pageId}/append`, { body: { text } })

const entry = (knowledgebaseId: string, type: string, id: string, change: string, changedAt: string) => ({
  knowledgebaseId,
  type,
  id,
  change,
  changedAt
})

describe("entries", () => {
  it("answers {changes, nextCursor}; an empty Knowledgebase has no entries", async () => {
    const kb = await newKnowledgebase()
    const response = await feed(kb)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(response.body).toEqual({ changes: [], nextCursor: null, tailCursor: expect.any(String) })
  })

  it("tailCursor resumes after the end of the feed: polling with it returns only later changes", async () => {
    const kb = await newKnowledgebase()
    await createPage(kb, { title: "Before", bodyMarkdown: "x" })
    const first = await feed(kb)
    expect(first.body.nextCursor).toBeNull()
    const quiet = await feed(kb, `?cursor=${encodeURIComponent(first.body.tailCursor)}`)
    expect(quiet.body.changes).toEqual([])
    const t = tick()
    const later = await createPage(kb, { title: "After", bodyMarkdown: "y" })
    const next = await feed(kb, `?cursor=${encodeURIComponent(quiet.body.tailCursor)}`)
    expect(next.body.changes).toEqual([entry(kb, "page", later.id, "created", t)])
    const sinceEmpty = await feed(kb, `?since=${encodeURIComponent("2099-01-01T00:00:00Z")}`)
    expect(sinceEmpty.body.changes).toEqual([])
    const t2 = tick()
    const latest = await createPage(kb, { title: "Latest", bodyMarkdown: "z" })
    expect((await feed(kb, `?cursor=${encodeURIComponent(sinceEmpty.body.tailCursor)}`)).body.changes).toEqual([
      entry(kb, "page", latest.id, "created", t2)
    ])
  })

  it("one entry per change, every change kept, oldest first: a page created then patched shows both", async () => {
    const kb = await newKnowledgebase()
    const tA = tick()
    const a = await createPage(kb, { title: "A", bodyMarkdown: "a" })
    const tB = tick()
    const b = await createPage(kb, { title: "B", bodyMarkdown: "b" })
    const created = [entry(kb, "page", a.id, "created", tA), entry(kb, "page", b.id, "created", tB)]
    expect(await entries(kb)).toEqual(created)

    const tEdit = tick()
    expect((await patchPage(kb, a.id, { patch: [{ op: "append", text: "!" }] })).status).toBe(200)
    const edited = [...created, entry(kb, "page", a.id, "updated", tEdit)]
    expect(await entries(kb)).toEqual(edited)

    const tAppend = tick()
    expect((await appendPage(kb, b.id, "?")).status).toBe(200)
    const appended = [...edited, entry(kb, "page", b.id, "updated", tAppend)]
    expect(await entries(kb)).toEqual(appended)

    const tDescription = tick()
    expect((await patchPage(kb, a.id, { description: "d" })).status).toBe(200)
    expect(await entries(kb)).toEqual([...appended, entry(kb, "page", a.id, "updated", tDescription)])
    expect((await walk(kb, 1)).all).toEqual(await entries(kb))
  })

  it("a source appears as created, then ready, in that order; polling in between misses neither", async () => {
    const kb = await newKnowledgebase()
    const tUpload = tick()
    const uploaded = await uploadSource(server, kb, { name: "Feed source", text: "Created first, ready second." })
    expect(uploaded.status).toBe("processing")
    const between = await feed(kb)
    const ready = await waitForSource(server, kb, uploaded.source.id)
    expect(ready.status).toBe("ready")
    expect(await entries(kb)).toEqual([
      entry(kb, "source", uploaded.source.id, "created", tUpload),
      entry(kb, "source", uploaded.source.id, "ready", ready.updatedAt)
    ])
    // Polling from wherever the first poll ended picks up exactly what it had not seen yet.
    const after = await feed(kb, `?cursor=${encodeURIComponent(between.body.tailCursor)}`)
    expect([...between.body.changes, ...after.body.changes]).toEqual(await entries(kb))
  })

  it("several changes within one millisecond still keep write order", async () => {
    const kb = await newKnowledgebase()
    const at = tick()
    const ids: Array<string> = []
    for (let i = 0; i < 6; i++) ids.push((await createPage(kb, { title: `P${i}` })).id)
    expect((await patchPage(kb, ids[2]!, { description: "later" })).status).toBe(200)
    expect((await entries(kb)).map((e) => [e.id, e.change])).toEqual([
      ...ids.map((id) => [id, "created"]),
      [ids[2], "updated"]
    ])
    expect((await entries(kb)).every((e) => e.changedAt === at)).toBe(true)
  })

  it("types are page and folder; a move appears as moved", async () => {
    const kb = await newKnowledgebase()
    const tFolder = tick()
    const folder = await createPage(kb, { title: "Folder", templateKey: "folder", description: "f" })
    const tNotes = tick()
    const notes = await createPage(kb, { title: "Notes", templateKey: "meeting_notes", bodyMarkdown: "n" })
    const tPage = tick()
    const page = await createPage(kb, { title: "Page" })
    expect(await entries(kb)).toEqual([
      entry(kb, "folder", folder.id, "created", tFolder),
      entry(kb, "page", notes.id, "created", tNotes),
      entry(kb, "page", page.id, "created", tPage)
    ])

    const tMove = tick()
    expect((await movePage(kb, notes.id, folder.id)).status).toBe(200)
    const tFolderEdit = tick()
    expect((await patchPage(kb, folder.id, { description: "g" })).status).toBe(200)
    const tFolderMove = tick()
    expect((await movePage(kb, folder.id, page.id)).status).toBe(200)
    expect(await entries(kb)).toEqual([
      entry(kb, "folder", folder.id, "created", tFolder),
      entry(kb, "page", notes.id, "created", tNotes),
      entry(kb, "page", page.id, "created", tPage),
      entry(kb, "page", notes.id, "moved", tMove),
      entry(kb, "folder", folder.id, "updated", tFolderEdit),
      entry(kb, "folder", folder.id, "moved", tFolderMove)
    ])
  })
})

describe("since and cursor", () => {
  /** Three entries at three distinct times. */
  const three = async () => {
    const kb = await newKnowledgebase()
    const times: Array<string> = []
    const ids: Array<string> = []
    for (const title of ["One", "Two", "Three"]) {
      times.push(tick())
      ids.push((await createPage(kb, { title })).id)
    }
    return { kb, times, ids }
  }

  it("since is inclusive and keeps only rows changed at or after it", async () => {
    const { kb, times, ids } = await three()
    const at = async (since: string) => {
      const response = await feed(kb, `?since=${encodeURIComponent(since)}`)
      expect(response.status).toBe(200)
      return response.body.changes.map((e: any) => e.id)
    }
    expect(await at(times[0]!)).toEqual(ids)
    expect(await at(times[1]!)).toEqual([ids[1], ids[2]])
    const justAfter = new Date(Date.parse(times[1]!) + 1).toISOString()
    expect(justAfter).toBe(times[2])
    expect(await at(new Date(Date.parse(times[1]!) + 0.5).toISOString())).toEqual([ids[1], ids[2]])
    expect(await at(times[2]!)).toEqual([ids[2]])
    expect(await at(new Date(Date.parse(times[2]!) + 1).toISOString())).toEqual([])
    // Any offset is the same instant.
    const offset = new Date(Date.parse(times[1]!) + 2 * 3_600_000).toISOString().replace("Z", "+02:00")
    expect(await at(offset)).toEqual([ids[1], ids[2]])
    // A row changed again after `since` is reported for that later change.
    const tEdit = tick()
    expect((await patchPage(kb, ids[0]!, { description: "again" })).status).toBe(200)
    const response = await feed(kb, `?since=${encodeURIComponent(times[1]!)}`)
    expect(response.body.changes).toEqual([
      entry(kb, "page", ids[1]!, "created", times[1]!),
      entry(kb, "page", ids[2]!, "created", times[2]!),
      entry(kb, "page", ids[0]!, "updated", tEdit)
    ])
  })

  it("since pages with limit too", async () => {
    const { kb, times, ids } = await three()
    const first = await feed(kb, `?since=${encodeURIComponent(times[1]!)}&limit=1`)
    expect(first.status).toBe(200)
    expect(first.body.changes.map((e: any) => e.id)).toEqual([ids[1]])
    expect(first.body.nextCursor).toEqual(expect.any(String))
    const second = await feed(kb, `?cursor=${encodeURIComponent(first.body.nextCursor)}&limit=1`)
    expect(second.body.changes.map((e: any) => e.id)).toEqual([ids[2]])
    expect(second.body.nextCursor).toBeNull()
  })

  it("cursor paging with limit walks every entry once, in order", async () => {
    const kb = await newKnowledgebase()
    const ids: Array<string> = []
    for (let i = 0; i < 7; i++) {
      tick()
      ids.push((await createPage(kb, { title: `Page ${i}` })).id)
    }
    for (const limit of [1, 2, 3, 7]) {
      const { all, pages } = await walk(kb, limit)
      expect(all.map((e) => e.id)).toEqual(ids)
      expect(pages).toBe(Math.ceil(7 / limit))
    }
    const big = await walk(kb, 200)
    expect(big.all.map((e) => e.id)).toEqual(ids)
    expect(big.pages).toBe(1)
  })

  it("a row changed again after a cursor was handed out comes back after it, for that change", async () => {
    const kb = await newKnowledgebase()
    const ids: Array<string> = []
    for (const title of ["A", "B", "C"]) {
      tick()
      ids.push((await createPage(kb, { title })).id)
    }
    const first = await feed(kb, "?limit=2")
    expect(first.body.changes.map((e: any) => e.id)).toEqual([ids[0], ids[1]])
    const cursor = first.body.nextCursor as string
    const tEdit = tick()
    expect((await patchPage(kb, ids[0]!, { description: "changed" })).status).toBe(200)
    const next = await feed(kb, `?limit=2&cursor=${encodeURIComponent(cursor)}`)
    expect(next.status).toBe(200)
    expect(next.body.changes).toEqual([
      expect.objectContaining({ id: ids[2], change: "created" }),
      entry(kb, "page", ids[0]!, "updated", tEdit)
    ])
  })

  it("since and cursor together → 400 invalid_request", async () => {
    const { kb, times } = await three()
    const first = await feed(kb, "?limit=1")
    const message = expectError(
      await feed(kb, `?since=${encodeURIComponent(times[0]!)}&cursor=${encodeURIComponent(first.body.nextCursor)}`),
      400,
      "invalid_request"
    )
    expect(message).toMatch(/since/)
    expect(message).toMatch(/cursor/)
  })

  it.each([
    ["a malformed since", "?since=yesterday"],
    ["a since that is not a date", "?since=2026-13-45T99:00:00Z"],
    ["a limit of 0", "?limit=0"],
    ["a limit of 201", "?limit=201"],
    ["a fractional limit", "?limit=1.5"],
    ["a garbage cursor", "?cursor=garbage"],
    ["a tampered cursor", "TAMPER"],
    ["an unknown query parameter", "?updatedSince=2026-01-01T00:00:00Z"]
  ])("%s → 400 invalid_request", async (_case, query) => {
    const kb = await newKnowledgebase()
    await createPage(kb, { title: "One" })
    tick()
    await createPage(kb, { title: "Two" })
    let q = query
    if (query === "TAMPER") {
      const cursor = (await feed(kb, "?limit=1")).body.nextCursor as string
      const [payload, mac] = cursor.split(".")
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), p: [0] })).toString(
        "base64url"
      )
      q = `?cursor=${encodeURIComponent(`${forged}.${mac}`)}`
    }
    expectError(await feed(kb, q), 400, "invalid_request")
  })

  it("a cursor of one Knowledgebase used on another, or on all → 400 invalid_request", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase()
    for (const id of [kb, other]) {
      await createPage(id, { title: "One" })
      tick()
      await createPage(id, { title: "Two" })
    }
    const cursor = (await feed(kb, "?limit=1")).body.nextCursor as string
    expect(cursor).toEqual(expect.any(String))
    expectError(await feed(other, `?cursor=${encodeURIComponent(cursor)}`), 400, "invalid_request")
    expectError(await feed("all", `?cursor=${encodeURIComponent(cursor)}`), 400, "invalid_request")
    const allCursor = (await feed("all", "?limit=1")).body.nextCursor as string
    expectError(await feed(kb, `?cursor=${encodeURIComponent(allCursor)}`), 400, "invalid_request")
    // Still good where it came from.
    expect((await feed(kb, `?cursor=${encodeURIComponent(cursor)}`)).status).toBe(200)
  })

  it("a cursor of another organization's feed → 400 invalid_request", async () => {
    const { slug, key } = await newOrganization()
    const theirs = await newKnowledgebase(slug)
    await createPage(theirs, { title: "One" }, key)
    tick()
    await createPage(theirs, { title: "Two" }, key)
    const theirCursor = (await feed("all", "?limit=1", key)).body.nextCursor as string
    expect(theirCursor).toEqual(expect.any(String))
    expectError(await feed("all", `?cursor=${encodeURIComponent(theirCursor)}`), 400, "invalid_request")
  })
})

describe("all", () => {
  it("spans every Knowledgebase of the organization, oldest first, and never another organization's", async () => {
    const mine = await newOrganization()
    const theirs = await newOrganization()
    const kb1 = await newKnowledgebase(mine.slug, "One")
    const kb2 = await newKnowledgebase(mine.slug, "Two")
    const foreign = await newKnowledgebase(theirs.slug, "Foreign")

    const t1 = tick()
    const p1 = await createPage(kb1, { title: "In one" }, mine.key)
    tick()
    await createPage(foreign, { title: "Foreign page" }, theirs.key)
    const t2 = tick()
    const f2 = await createPage(kb2, { title: "Folder in two", templateKey: "folder" }, mine.key)
    const t3 = tick()
    expect((await patchPage(kb1, p1.id, { description: "edited" }, mine.key)).status).toBe(200)

    const all = await entries("all", mine.key)
    expect(all).toEqual([
      entry(kb1, "page", p1.id, "created", t1),
      entry(kb2, "folder", f2.id, "created", t2),
      entry(kb1, "page", p1.id, "updated", t3)
    ])
    expect((await walk("all", 1, mine.key)).all).toEqual(all)

    const theirsAll = await entries("all", theirs.key)
    expect(theirsAll.map((e) => e.knowledgebaseId)).toEqual([foreign])
    // The single-Knowledgebase feeds agree with `all`.
    expect(await entries(kb1, mine.key)).toEqual([entry(kb1, "page", p1.id, "created", t1), entry(kb1, "page", p1.id, "updated", t3)])
    expect(await entries(kb2, mine.key)).toEqual([entry(kb2, "folder", f2.id, "created", t2)])
  })

  it("all with since", async () => {
    const mine = await newOrganization()
    const kb1 = await newKnowledgebase(mine.slug)
    const kb2 = await newKnowledgebase(mine.slug)
    tick()
    await createPage(kb1, { title: "Old" }, mine.key)
    const t = tick()
    const fresh = await createPage(kb2, { title: "New" }, mine.key)
    const response = await feed("all", `?since=${encodeURIComponent(t)}`, mine.key)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ changes: [entry(kb2, "page", fresh.id, "created", t)], nextCursor: null, tailCursor: expect.any(String) })
  })

  it("an organization without Knowledgebases has an empty all feed", async () => {
    const { key } = await newOrganization()
    expect((await feed("all", "", key)).body).toEqual({ changes: [], nextCursor: null, tailCursor: expect.any(String) })
  })
})

describe("not found and scopes", () => {
  it("an unknown Knowledgebase, a malformed id, or one of another organization → 404 not_found", async () => {
    expectError(await feed(unknownId()), 404, "not_found")
    expectError(await feed("not-a-uuid"), 404, "not_found")
    expectError(await feed("ALL"), 404, "not_found")
    const { slug, key } = await newOrganization()
    const theirs = await newKnowledgebase(slug)
    await createPage(theirs, { title: "Theirs" }, key)
    expectError(await feed(theirs), 404, "not_found")
    expect((await feed(theirs, "", key)).status).toBe(200)
  })

  it("needs knowledge:read; knowledge:write alone → 403 insufficient_scope", async () => {
    const kb = await newKnowledgebase()
    const reader = await server.createKey({ name: "feed reader", scopes: ["knowledge:read"] })
    const writer = await server.createKey({ name: "feed writer", scopes: ["knowledge:write"] })
    expect((await feed(kb, "", reader)).status).toBe(200)
    expect((await feed("all", "", reader)).status).toBe(200)
    expectError(await feed(kb, "", writer), 403, "insufficient_scope")
    expectError(await feed("all", "", writer), 403, "insufficient_scope")
    expectError(await server.request("GET", `/knowledgebases/${kb}/changes`, { key: null }), 401, "unauthorized")
  })
})

describe("refused writes add no entry", () => {
  it("validation, size, anchors, folders, moves, scopes and unknown parents leave the feed as it was", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase()
    tick()
    const folder = await createPage(kb, { title: "Folder", templateKey: "folder" })
    tick()
    const page = await createPage(kb, { title: "Page", bodyMarkdown: "only", parentPageId: folder.id })
    const foreign = await createPage(other, { title: "Foreign" })
    const before = await entries(kb)
    const beforeOther = await entries(other)
    const beforeAll = await entries("all")
    tick()

    const post = (body: unknown) => server.request("POST", `/knowledgebases/${kb}/pages`, { body })
    expectError(await post({ title: "" }), 400, "invalid_request")
    expectError(await post({ title: "x", surprise: true }), 400, "invalid_request")
    expectError(await post({ title: "Folder", templateKey: "folder", bodyMarkdown: "no" }), 400, "invalid_request")
    expectError(await post({ title: "Big", bodyMarkdown: "a".repeat(262_144) }), 413, "payload_too_large")
    expectError(await post({ title: "Lost", parentPageId: unknownId() }), 404, "not_found")
    expectError(await post({ title: "Cross", parentPageId: foreign.id }), 404, "not_found")
    expectError(await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: "missing", newString: "x" }] }), 400, "invalid_request")
    expectError(await patchPage(kb, page.id, {}), 400, "invalid_request")
    expectError(await patchPage(kb, folder.id, { patch: [{ op: "append", text: "x" }] }), 400, "invalid_request")
    expectError(await patchPage(kb, page.id, { patch: [{ op: "append", text: "a".repeat(262_140) }] }), 413, "payload_too_large")
    expectError(await appendPage(kb, folder.id, "x"), 400, "invalid_request")
    expectError(await movePage(kb, folder.id, page.id), 400, "invalid_request")
    expectError(await movePage(kb, folder.id, folder.id), 400, "invalid_request")
    expectError(await movePage(kb, page.id, foreign.id), 404, "not_found")
    expectError(await movePage(other, page.id, null), 404, "not_found")
    const reader = await server.createKey({ name: "refused reader", scopes: ["knowledge:read"] })
    expectError(await patchPage(kb, page.id, { description: "no" }, reader), 403, "insufficient_scope")

    expect(await entries(kb)).toEqual(before)
    expect(await entries(other)).toEqual(beforeOther)
    expect(await entries("all")).toEqual(beforeAll)
  })

  it("an Idempotency-Key replay adds no entry", async () => {
    const kb = await newKnowledgebase()
    const headers = { "idempotency-key": "changes-replay" }
    const first = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Once" }, headers })
    expect(first.status).toBe(201)
    tick()
    const second = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Once" }, headers })
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(await entries(kb)).toHaveLength(1)
  })
})
