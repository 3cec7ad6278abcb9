/**
 * Pages and folders of a Knowledgebase over HTTP: create (shape, folders, parents, validation,
 * the 256 KB body limit, Idempotency-Key), the full read, PATCH with every operation and its
 * all-or-nothing rule, append, move, links between pages, the revision history, and scopes.
 *
 * Every refusal is checked for side effects: the page, its revisions, the changes feed and the
 * Knowledgebase (counts, updatedAt) must read exactly as before.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, insertKnowledgebases, personalKey, unknownId } from "../support/fixtures.js"
import { uuidPattern } from "../support/patterns.js"
import { startTestServer, type TestResponse, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())
// Each test starts with a fresh rate-limit window (120 requests per minute per key).
beforeEach(() => server.clock.advance(60_000))

const now = () => new Date(server.clock.now()).toISOString()
const noLinks = { pages: [], sources: [], unresolved: [] }

type Opts = { key?: string; headers?: Record<string, string> }
const withKey = (opts: Opts = {}) => ({
  ...(opts.key === undefined ? {} : { key: opts.key }),
  ...(opts.headers === undefined ? {} : { headers: opts.headers })
})

/** A fresh Knowledgebase, inserted directly so the suite never meets the plan's cap. */
const newKnowledgebase = async (org = "default", name = "Handbook"): Promise<string> =>
  (await insertKnowledgebases(server, { org, count: 1, prefix: name }))[0]!.id
const createPage = (kb: string, body: unknown, opts?: Opts) =>
  server.request("POST", `/knowledgebases/${kb}/pages`, { body, ...withKey(opts) })
/** Creates a page (or folder) and returns its summary; fails the test unless 201. */
const made = async (kb: string, body: Record<string, unknown>, opts?: Opts) => {
  const response = await createPage(kb, body, opts)
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 201 })
  return response.body.page as { id: string; title: string; [k: string]: unknown }
}
const getPage = (kb: string, pageId: string, opts?: Opts) =>
  server.request("GET", `/knowledgebases/${kb}/pages/${pageId}`, withKey(opts))
const readPage = async (kb: string, pageId: string) => {
  const response = await getPage(kb, pageId)
  expect(response.status).toBe(200)
  return response.body.page
}
const patchPage = (kb: string, pageId: string, body: unknown, opts?: Opts) =>
  server.request("PATCH", `/knowledgebases/${kb}/pages/${pageId}`, { body, ...withKey(opts) })
const appendPage = (kb: string, pageId: string, body: unknown, opts?: Opts) =>
  server.request("POST", `/knowledgebases/${kb}/pages/${pageId}/append`, { body, ...withKey(opts) })
const movePage = (kb: string, pageId: string, body: unknown, opts?: Opts) =>
  server.request("POST", `/knowledgebases/${kb}/pages/${pageId}/move`, { body, ...withKey(opts) })
const revisions = (kb: string, pageId: string, query = "", opts?: Opts) =>
  server.request("GET", `/knowledgebases/${kb}/pages/${pageId}/revisions${query}`, withKey(opts))
const listRevisions = async (kb: string, pageId: string) => {
  const response = await revisions(kb, pageId, "?limit=200")
  expect(response.status).toBe(200)
  return response.body.revisions as Array<any>
}
const changes = async (kb: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`)
  expect(response.status).toBe(200)
  return response.body.changes as Array<any>
}
const knowledgebase = async (kb: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}`)
  expect(response.status).toBe(200)
  return response.body.knowledgebase
}
const pageCount = async (kb: string): Promise<number> => (await knowledgebase(kb)).counts.pages

/** Everything a write could touch, for "nothing was written" checks. */
const snapshot = async (kb: string, pageId?: string) => ({
  page: pageId === undefined ? null : (await getPage(kb, pageId)).body,
  revisions: pageId === undefined ? null : await listRevisions(kb, pageId),
  changes: await changes(kb),
  knowledgebase: await knowledgebase(kb)
})
/** Asserts that `refused` changed nothing, advancing the clock first so a stray write would show. */
const expectUnchanged = async (before: Awaited<ReturnType<typeof snapshot>>, kb: string, pageId?: string) => {
  expect(await snapshot(kb, pageId)).toEqual(before)
}

/** Asserts a page write answer: status, page summary, revision id, reviewPath, links. */
const expectApplied = (response: TestResponse, status: number, page: Record<string, unknown>, links: unknown = noLinks) => {
  expect(response.status).toBe(status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  expect(response.body).toEqual({
    status: "applied",
    page: expect.objectContaining(page),
    revisionId: expect.stringMatching(uuidPattern),
    reviewPath: null,
    links
  })
}

const byId = <T extends { id: string }>(items: ReadonlyArray<T>) => [...items].sort((a, b) => (a.id < b.id ? -1 : 1))

describe("POST /knowledgebases/{id}/pages", () => {
  it("creates a page: 201 applied with the page summary, a revision id, reviewPath null and links", async () => {
    const kb = await newKnowledgebase()
    const at = now()
    const response = await createPage(kb, { title: "Refund policy", bodyMarkdown: "# Refunds\n\nWithin 30 days." })
    expect(response.status).toBe(201)
    expect(response.body).toEqual({
      status: "applied",
      page: {
        id: expect.stringMatching(uuidPattern),
        knowledgebaseId: kb,
        title: "Refund policy",
        templateKey: "page",
        parentPageId: null,
        createdAt: at,
        updatedAt: at,
        description: "",
        isFolder: false
      },
      revisionId: expect.stringMatching(uuidPattern),
      reviewPath: null,
      links: noLinks
    })
    const page = await readPage(kb, response.body.page.id)
    expect(page.markdown).toBe("# Refunds\n\nWithin 30 days.")
    const history = await listRevisions(kb, response.body.page.id)
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({ id: response.body.revisionId, number: 1, kind: "create", status: "applied" })
    expect(await changes(kb)).toEqual([
      { knowledgebaseId: kb, type: "page", id: response.body.page.id, change: "created", changedAt: at }
    ])
    const detail = await knowledgebase(kb)
    expect(detail.counts).toEqual({ sources: 0, pages: 1 })
    expect(detail.updatedAt).toBe(at)
  })

  it("a page without a body has an empty body; description and templateKey are kept", async () => {
    const kb = await newKnowledgebase()
    const response = await createPage(kb, { title: "Standup", templateKey: "meeting_notes", description: "Daily notes" })
    expectApplied(response, 201, { title: "Standup", templateKey: "meeting_notes", description: "Daily notes", isFolder: false })
    const page = await readPage(kb, response.body.page.id)
    expect(page).toMatchObject({ markdown: "", templateKey: "meeting_notes", description: "Daily notes", isFolder: false })
    expect(await pageCount(kb)).toBe(1)
  })

  it("creates a folder (templateKey folder) with a description; folders are not counted as pages", async () => {
    const kb = await newKnowledgebase()
    const folder = await createPage(kb, { title: "Policies", templateKey: "folder", description: "Every policy" })
    expectApplied(folder, 201, {
      title: "Policies",
      templateKey: "folder",
      description: "Every policy",
      isFolder: true,
      parentPageId: null
    })
    const read = await readPage(kb, folder.body.page.id)
    expect(read).toMatchObject({ isFolder: true, templateKey: "folder", markdown: "", description: "Every policy" })
    expect(await pageCount(kb)).toBe(0)
    expect((await changes(kb)).map((c) => [c.type, c.change])).toEqual([["folder", "created"]])

    await made(kb, { title: "Inside", bodyMarkdown: "x", parentPageId: folder.body.page.id })
    await made(kb, { title: "Sub-folder", templateKey: "folder", parentPageId: folder.body.page.id })
    await made(kb, { title: "Top page" })
    expect(await pageCount(kb)).toBe(2)
  })

  it("a folder given bodyMarkdown → 400 invalid_request naming it, nothing written", async () => {
    const kb = await newKnowledgebase()
    const before = await snapshot(kb)
    for (const bodyMarkdown of ["Some content", ""]) {
      const message = expectError(
        await createPage(kb, { title: "Folder", templateKey: "folder", bodyMarkdown }),
        400,
        "invalid_request"
      )
      expect(message).toMatch(/\bbodyMarkdown\b/)
    }
    await expectUnchanged(before, kb)
  })

  it("files the page under a parent page or folder of the same Knowledgebase", async () => {
    const kb = await newKnowledgebase()
    const folder = await made(kb, { title: "Folder", templateKey: "folder" })
    const page = await made(kb, { title: "Parent page", bodyMarkdown: "parent" })
    const inFolder = await createPage(kb, { title: "Child A", parentPageId: folder.id })
    expectApplied(inFolder, 201, { parentPageId: folder.id })
    const underPage = await createPage(kb, { title: "Child B", parentPageId: page.id })
    expectApplied(underPage, 201, { parentPageId: page.id })
    const top = await createPage(kb, { title: "Top", parentPageId: null })
    expectApplied(top, 201, { parentPageId: null })
    expect((await readPage(kb, inFolder.body.page.id)).parentPageId).toBe(folder.id)
    expect((await readPage(kb, folder.id)).children).toEqual([
      { id: inFolder.body.page.id, title: "Child A", description: "", isFolder: false, childCount: 0 }
    ])
  })

  it("a parent in another Knowledgebase, or unknown → 404 not_found, nothing written", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase("default", "Other")
    const foreign = await made(other, { title: "Foreign folder", templateKey: "folder" })
    const before = await snapshot(kb)
    const otherBefore = await snapshot(other, foreign.id)
    expectError(await createPage(kb, { title: "Child", parentPageId: foreign.id }), 404, "not_found")
    expectError(await createPage(kb, { title: "Child", parentPageId: unknownId() }), 404, "not_found")
    expectError(await createPage(kb, { title: "Folder", templateKey: "folder", parentPageId: foreign.id }), 404, "not_found")
    await expectUnchanged(before, kb)
    await expectUnchanged(otherBefore, other, foreign.id)
  })

  it("an unknown Knowledgebase, or one of another organization → 404 not_found", async () => {
    expectError(await createPage(unknownId(), { title: "Lost" }), 404, "not_found")
    expectError(await createPage("not-a-uuid", { title: "Lost" }), 404, "not_found")
    const otherKey = await server.createOrganization("pages-other-org")
    const foreignKb = await newKnowledgebase("pages-other-org", "Theirs")
    expectError(await createPage(foreignKb, { title: "Intruder" }), 404, "not_found")
    const theirs = await server.request("GET", `/knowledgebases/${foreignKb}`, { key: otherKey })
    expect(theirs.body.knowledgebase.counts.pages).toBe(0)
    const feed = await server.request("GET", `/knowledgebases/${foreignKb}/changes`, { key: otherKey })
    expect(feed.body.changes).toEqual([])
  })

  it.each([
    ["a missing title", { bodyMarkdown: "x" }, "title"],
    ["a null title", { title: null }, "title"],
    ["a numeric title", { title: 7 }, "title"],
    ["an empty title", { title: "" }, "title"],
    ["a blank title", { title: "   " }, "title"],
    ["a title of 201 characters", { title: "t".repeat(201) }, "title"],
    ["a numeric bodyMarkdown", { title: "ok", bodyMarkdown: 5 }, "bodyMarkdown"],
    ["a description of 2001 characters", { title: "ok", description: "d".repeat(2_001) }, "description"],
    ["a templateKey with capitals", { title: "ok", templateKey: "Folder" }, "templateKey"],
    ["a non-uuid parentPageId", { title: "ok", parentPageId: "not-a-uuid" }, "parentPageId"],
    ["an unknown property", { title: "ok", body: "misspelt bodyMarkdown" }, "body"],
    ["an id chosen by the client", { title: "ok", id: "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11" }, "id"]
  ])("%s → 400 invalid_request naming the field, nothing written", async (_case, body, field) => {
    const kb = await newKnowledgebase()
    const before = await snapshot(kb)
    const message = expectError(await createPage(kb, body), 400, "invalid_request")
    expect(message).toMatch(new RegExp(`\\b${field}\\b`))
    await expectUnchanged(before, kb)
  })

  it("accepts a title of 200 characters and unicode", async () => {
    const kb = await newKnowledgebase()
    expectApplied(await createPage(kb, { title: "t".repeat(200) }), 201, { title: "t".repeat(200) })
    expectApplied(await createPage(kb, { title: "Seite – 页面 📄" }), 201, { title: "Seite – 页面 📄" })
  })

  it("malformed JSON → 400 invalid_request", async () => {
    const kb = await newKnowledgebase()
    expectError(await createPage(kb, "{ not json"), 400, "invalid_request")
    expect(await pageCount(kb)).toBe(0)
  })

  it("a body of 262143 bytes is accepted; 262144 bytes or more → 413 payload_too_large, nothing written", async () => {
    const kb = await newKnowledgebase()
    const before = await snapshot(kb)
    expectError(await createPage(kb, { title: "Too big", bodyMarkdown: "a".repeat(262_144) }), 413, "payload_too_large")
    expectError(await createPage(kb, { title: "Far too big", bodyMarkdown: "a".repeat(300_000) }), 413, "payload_too_large")
    // Bytes, not characters: 131072 two-byte characters are 262144 bytes.
    expectError(await createPage(kb, { title: "Wide", bodyMarkdown: "é".repeat(131_072) }), 413, "payload_too_large")
    await expectUnchanged(before, kb)

    const fits = await createPage(kb, { title: "Just fits", bodyMarkdown: "a".repeat(262_143) })
    expectApplied(fits, 201, { title: "Just fits" })
    expect((await readPage(kb, fits.body.page.id)).markdown).toHaveLength(262_143)
    expectApplied(await createPage(kb, { title: "Wide fits", bodyMarkdown: "é".repeat(131_071) + "a" }), 201, {})
    expect(await pageCount(kb)).toBe(2)
  })

  it("Idempotency-Key: a replay returns the first response and creates once; another body → 409 conflict", async () => {
    const kb = await newKnowledgebase()
    const headers = { "idempotency-key": "page-create-1" }
    const body = { title: "Once", bodyMarkdown: "only once" }
    const first = await createPage(kb, body, { headers })
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    server.clock.advance(1_000)
    const second = await createPage(kb, body, { headers })
    expect(second.status).toBe(201)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(await pageCount(kb)).toBe(1)
    expect(await changes(kb)).toHaveLength(1)

    expectError(await createPage(kb, { title: "Different" }, { headers }), 409, "conflict")
    expect(await pageCount(kb)).toBe(1)

    // The key is scoped to the address: the same key on another Knowledgebase is a new create.
    const other = await newKnowledgebase("default", "Other")
    expect((await createPage(other, body, { headers })).status).toBe(201)
    expect(await pageCount(other)).toBe(1)
    expect(await pageCount(kb)).toBe(1)
  })
})

describe("GET /knowledgebases/{id}/pages/{pageId}", () => {
  it("returns the page in full: summary fields, markdown, attachedFiles, links both ways and children", async () => {
    const kb = await newKnowledgebase()
    const target = await made(kb, { title: "Target", bodyMarkdown: "I am linked to." })
    server.clock.advance(1)
    const createdAt = now()
    const page = await made(kb, {
      title: "Guide",
      description: "How to",
      bodyMarkdown: `# Guide\n\nSee [the target](svcpage://${target.id}).`
    })
    server.clock.advance(1)
    const folderChild = await made(kb, { title: "Child folder", templateKey: "folder", description: "F", parentPageId: page.id })
    server.clock.advance(1)
    const pageChild = await made(kb, { title: "Child page", bodyMarkdown: "c", parentPageId: page.id })
    await made(kb, { title: "Grandchild", parentPageId: folderChild.id })
    await made(kb, { title: "Grandchild 2", parentPageId: folderChild.id })

    const response = await getPage(kb, page.id)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({
      page: {
        id: page.id,
        knowledgebaseId: kb,
        title: "Guide",
        templateKey: "page",
        parentPageId: null,
        createdAt,
        updatedAt: createdAt,
        description: "How to",
        isFolder: false,
        markdown: `# Guide\n\nSee [the target](svcpage://${target.id}).`,
        attachedFiles: [],
        relatedPages: [{ id: target.id, title: "Target" }],
        referencedBy: [],
        children: expect.any(Array)
      }
    })
    expect(byId(response.body.page.children)).toEqual(
      byId([
        { id: folderChild.id, title: "Child folder", description: "F", isFolder: true, childCount: 2 },
        { id: pageChild.id, title: "Child page", description: "", isFolder: false, childCount: 0 }
      ])
    )
    const targetRead = await readPage(kb, target.id)
    expect(targetRead.referencedBy).toEqual([{ id: page.id, title: "Guide" }])
    expect(targetRead.relatedPages).toEqual([])
    expect(targetRead.children).toEqual([])
  })

  it("a page of another Knowledgebase → 404 not_found", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase("default", "Other")
    const page = await made(other, { title: "Elsewhere", bodyMarkdown: "x" })
    expectError(await getPage(kb, page.id), 404, "not_found")
    expect((await getPage(other, page.id)).status).toBe(200)
  })

  it("an unknown or malformed page id → 404 not_found", async () => {
    const kb = await newKnowledgebase()
    expectError(await getPage(kb, unknownId()), 404, "not_found")
    expectError(await getPage(kb, "not-a-uuid"), 404, "not_found")
    expectError(await getPage(unknownId(), unknownId()), 404, "not_found")
  })

  it("a page of another organization → 404 not_found, by its own Knowledgebase id or ours", async () => {
    const otherKey = await server.createOrganization("pages-read-other")
    const theirKb = await newKnowledgebase("pages-read-other", "Theirs")
    const theirPage = await made(theirKb, { title: "Secret", bodyMarkdown: "secret" }, { key: otherKey })
    expect((await getPage(theirKb, theirPage.id, { key: otherKey })).status).toBe(200)
    expectError(await getPage(theirKb, theirPage.id), 404, "not_found")
    const ours = await newKnowledgebase()
    expectError(await getPage(ours, theirPage.id), 404, "not_found")
    expectError(await revisions(theirKb, theirPage.id), 404, "not_found")
    expectError(await patchPage(theirKb, theirPage.id, { description: "mine now" }), 404, "not_found")
    expectError(await appendPage(theirKb, theirPage.id, { text: "mine now" }), 404, "not_found")
    expectError(await movePage(theirKb, theirPage.id, { parentPageId: null }), 404, "not_found")
    const still = await getPage(theirKb, theirPage.id, { key: otherKey })
    expect(still.body.page).toMatchObject({ markdown: "secret", description: "" })
  })
})

describe("PATCH /knowledgebases/{id}/pages/{pageId}", () => {
  const body = "# Policy\n\nRefunds take 5 days.\n\n## Returns\n\nFree returns.\n\n## Contact\n\nsupport@example.com\n"
  const setup = async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Policy", bodyMarkdown: body })
    server.clock.advance(1_000)
    return { kb, page }
  }
  const edit = async (patch: Array<Record<string, unknown>>) => {
    const { kb, page } = await setup()
    const at = now()
    const response = await patchPage(kb, page.id, { patch })
    expectApplied(response, 200, { id: page.id, knowledgebaseId: kb, title: "Policy", updatedAt: at })
    const read = await readPage(kb, page.id)
    expect(read.updatedAt).toBe(at)
    return { kb, page, response, markdown: read.markdown as string }
  }

  it("replace: oldString exactly once", async () => {
    const { markdown } = await edit([{ op: "replace", oldString: "5 days", newString: "3 days" }])
    expect(markdown).toBe(body.replace("5 days", "3 days"))
  })

  it("replace with replaceAll: every occurrence", async () => {
    const { markdown } = await edit([{ op: "replace", oldString: "##", newString: "###", replaceAll: true }])
    expect(markdown).toBe(body.replaceAll("##", "###"))
  })

  it("replace with replaceAll: false behaves like a plain replace", async () => {
    const { markdown } = await edit([{ op: "replace", oldString: "Free returns.", newString: "Paid returns.", replaceAll: false }])
    expect(markdown).toBe(body.replace("Free returns.", "Paid returns."))
  })

  it("insert_before and insert_after", async () => {
    const { markdown } = await edit([
      { op: "insert_before", anchor: "## Returns", text: "## Shipping\n\nWorldwide.\n\n" },
      { op: "insert_after", anchor: "## Contact\n", text: "\nCall us.\n" }
    ])
    expect(markdown).toBe(
      body.replace("## Returns", "## Shipping\n\nWorldwide.\n\n## Returns").replace("## Contact\n", "## Contact\n\nCall us.\n")
    )
  })

  it("prepend and append add their text verbatim", async () => {
    const { markdown } = await edit([
      { op: "prepend", text: "> Reviewed.\n\n" },
      { op: "append", text: "Updated." }
    ])
    expect(markdown).toBe(`> Reviewed.\n\n${body}Updated.`)
  })

  it("replace_range replaces from `from` (inclusive) to `to` (exclusive) with text", async () => {
    const { markdown } = await edit([{ op: "replace_range", from: "## Returns", to: "## Contact", text: "## Returns\n\nNone.\n\n" }])
    expect(markdown).toBe("# Policy\n\nRefunds take 5 days.\n\n## Returns\n\nNone.\n\n## Contact\n\nsupport@example.com\n")
  })

  it("replace_range without text deletes the range", async () => {
    const { markdown } = await edit([{ op: "replace_range", from: "## Returns", to: "## Contact" }])
    expect(markdown).toBe("# Policy\n\nRefunds take 5 days.\n\n## Contact\n\nsupport@example.com\n")
  })

  it("operations apply in order, each against the result of the previous one", async () => {
    const { markdown, kb, page } = await edit([
      { op: "insert_after", anchor: "Free returns.", text: " Within 30 days." },
      { op: "replace", oldString: "30 days", newString: "45 days" },
      { op: "replace_range", from: "Refunds take", to: "\n\n## Returns", text: "Refunds are instant." },
      { op: "prepend", text: "Draft\n" },
      { op: "replace", oldString: "Draft\n", newString: "Final\n" },
      { op: "append", text: "END" },
      { op: "insert_before", anchor: "END", text: "-- " }
    ])
    expect(markdown).toBe(
      "Final\n# Policy\n\nRefunds are instant.\n\n## Returns\n\nFree returns. Within 45 days.\n\n## Contact\n\nsupport@example.com\n-- END"
    )
    const history = await listRevisions(kb, page.id)
    expect(history.map((r) => [r.number, r.kind, r.status])).toEqual([
      [2, "edit", "applied"],
      [1, "create", "applied"]
    ])
    expect(history[0].markdown).toBe(markdown)
  })

  it("an anchor made unique by an earlier operation of the same patch applies", async () => {
    // "Free" appears twice only after the first operation, so the second op must see two.
    const { kb, page } = await setup()
    const ok = await patchPage(kb, page.id, {
      patch: [
        { op: "replace", oldString: "Free returns.", newString: "Gratis returns." },
        { op: "replace", oldString: "Gratis", newString: "Free" }
      ]
    })
    expect(ok.status).toBe(200)
    expect((await readPage(kb, page.id)).markdown).toBe(body)
  })

  it("records the edit: revisionId is the new revision, the changes feed says updated, the Knowledgebase is touched", async () => {
    const { kb, page, response } = await edit([{ op: "replace", oldString: "5 days", newString: "3 days" }])
    const history = await listRevisions(kb, page.id)
    expect(history[0]).toMatchObject({ id: response.body.revisionId, number: 2, kind: "edit", status: "applied" })
    const at = response.body.page.updatedAt
    expect(await changes(kb)).toEqual([
      { knowledgebaseId: kb, type: "page", id: page.id, change: "created", changedAt: page.createdAt },
      { knowledgebaseId: kb, type: "page", id: page.id, change: "updated", changedAt: at }
    ])
    const detail = await knowledgebase(kb)
    expect(detail.updatedAt).toBe(at)
    expect(detail.counts.pages).toBe(1)
  })

  describe("every anchor exactly once, or nothing is written", () => {
    it.each([
      ["replace: oldString missing", [{ op: "replace", oldString: "7 days", newString: "x" }], "patch[0] (replace)"],
      ["replace: oldString ambiguous", [{ op: "replace", oldString: "## ", newString: "x" }], "patch[0] (replace)"],
      [
        "replace replaceAll: oldString missing",
        [{ op: "replace", oldString: "nowhere", newString: "x", replaceAll: true }],
        "patch[0] (replace)"
      ],
      [
        "insert_after: anchor missing after a good op",
        [
          { op: "replace", oldString: "5 days", newString: "3 days" },
          { op: "insert_after", anchor: "## Shipping", text: "x" }
        ],
        "patch[1] (insert_after)"
      ],
      [
        "insert_after: anchor ambiguous",
        [
          { op: "append", text: "tail" },
          { op: "insert_after", anchor: "Re", text: "x" }
        ],
        "patch[1] (insert_after)"
      ],
      [
        "insert_before: anchor missing",
        [
          { op: "prepend", text: "x" },
          { op: "append", text: "y" },
          { op: "insert_before", anchor: "## Missing", text: "x" }
        ],
        "patch[2] (insert_before)"
      ],
      [
        "insert_before: anchor made ambiguous by an earlier op",
        [
          { op: "append", text: "\n## Returns again\n" },
          { op: "insert_before", anchor: "## Returns", text: "x" }
        ],
        "patch[1] (insert_before)"
      ],
      [
        "an anchor removed by an earlier op",
        [
          { op: "replace", oldString: "Free returns.", newString: "No returns." },
          { op: "replace", oldString: "Free returns.", newString: "x" }
        ],
        "patch[1] (replace)"
      ],
      ["replace_range: from missing", [{ op: "replace_range", from: "## Shipping", to: "## Contact" }], "patch[0] (replace_range)"],
      ["replace_range: to missing", [{ op: "replace_range", from: "## Returns", to: "## Shipping" }], "patch[0] (replace_range)"],
      ["replace_range: from ambiguous", [{ op: "replace_range", from: "##", to: "support" }], "patch[0] (replace_range)"],
      [
        "replace_range: misordered (to before from)",
        [{ op: "replace_range", from: "## Contact", to: "## Returns", text: "x" }],
        "patch[0] (replace_range)"
      ],
      [
        "replace_range: misordered after a good op",
        [
          { op: "append", text: "!" },
          { op: "replace_range", from: "Free returns.", to: "Refunds", text: "x" }
        ],
        "patch[1] (replace_range)"
      ],
      [
        "replace_range: to inside from",
        [{ op: "replace_range", from: "## Returns", to: "Returns", text: "x" }],
        "patch[0] (replace_range)"
      ]
    ])("%s → 400 invalid_request naming the op index", async (_case, patch, named) => {
      const { kb, page } = await setup()
      const before = await snapshot(kb, page.id)
      const message = expectError(await patchPage(kb, page.id, { patch }), 400, "invalid_request")
      expect(message).toContain(named)
      await expectUnchanged(before, kb, page.id)
      expect((await readPage(kb, page.id)).markdown).toBe(body)
      expect(await listRevisions(kb, page.id)).toHaveLength(1)
    })

    it("a refused patch also drops the description given beside it", async () => {
      const { kb, page } = await setup()
      const before = await snapshot(kb, page.id)
      const message = expectError(
        await patchPage(kb, page.id, {
          description: "Should not stick",
          patch: [
            { op: "replace", oldString: "5 days", newString: "3 days" },
            { op: "insert_after", anchor: "missing anchor", text: "x" }
          ]
        }),
        400,
        "invalid_request"
      )
      expect(message).toContain("patch[1] (insert_after)")
      await expectUnchanged(before, kb, page.id)
    })
  })

  it.each([
    ["an empty anchor", [{ op: "insert_after", anchor: "", text: "x" }], "anchor"],
    ["an empty oldString", [{ op: "replace", oldString: "", newString: "x" }], "oldString"],
    ["an unknown op", [{ op: "delete", anchor: "## Returns" }], "op"],
    ["a missing newString", [{ op: "replace", oldString: "5 days" }], "newString"],
    ["an unknown property in an op", [{ op: "append", text: "x", position: "end" }], "position"],
    ["a non-array patch", "append this", "patch"]
  ])("%s → 400 invalid_request naming it, nothing written", async (_case, patch, field) => {
    const { kb, page } = await setup()
    const before = await snapshot(kb, page.id)
    const message = expectError(await patchPage(kb, page.id, { patch }), 400, "invalid_request")
    expect(message).toMatch(new RegExp(`\\b${field}\\b`))
    await expectUnchanged(before, kb, page.id)
  })

  it("an unknown top-level property → 400 invalid_request naming it, nothing written", async () => {
    const { kb, page } = await setup()
    const before = await snapshot(kb, page.id)
    const message = expectError(
      await patchPage(kb, page.id, { title: "Renamed", patch: [{ op: "append", text: "x" }] }),
      400,
      "invalid_request"
    )
    expect(message).toMatch(/\btitle\b/)
    await expectUnchanged(before, kb, page.id)
  })

  it("50 operations are accepted; 51 → 400 invalid_request, nothing written", async () => {
    const { kb, page } = await setup()
    const fifty = Array.from({ length: 50 }, (_, i) => ({ op: "append", text: `<${i}>` }))
    const ok = await patchPage(kb, page.id, { patch: fifty })
    expect(ok.status).toBe(200)
    const expected = body + fifty.map((o) => o.text).join("")
    expect((await readPage(kb, page.id)).markdown).toBe(expected)

    server.clock.advance(1_000)
    const before = await snapshot(kb, page.id)
    const fiftyOne = Array.from({ length: 51 }, (_, i) => ({ op: "append", text: `[${i}]` }))
    const message = expectError(await patchPage(kb, page.id, { patch: fiftyOne }), 400, "invalid_request")
    expect(message).toMatch(/\bpatch\b/)
    expect(message).toMatch(/50/)
    await expectUnchanged(before, kb, page.id)
  })

  it("description only: changes the description, keeps the markdown, records an edit revision", async () => {
    const { kb, page } = await setup()
    const at = now()
    const response = await patchPage(kb, page.id, { description: "Our refund rules" })
    expectApplied(response, 200, { id: page.id, description: "Our refund rules", updatedAt: at })
    const read = await readPage(kb, page.id)
    expect(read).toMatchObject({ markdown: body, description: "Our refund rules", updatedAt: at })
    const history = await listRevisions(kb, page.id)
    expect(history[0]).toMatchObject({ number: 2, kind: "edit", status: "applied", description: "Our refund rules", markdown: body })
    expect((await changes(kb)).map((c) => c.change)).toEqual(["created", "updated"])
  })

  it("patch and description together apply both", async () => {
    const { kb, page } = await setup()
    const response = await patchPage(kb, page.id, {
      description: "Short",
      patch: [{ op: "replace", oldString: "5 days", newString: "2 days" }]
    })
    expectApplied(response, 200, { description: "Short" })
    expect(await readPage(kb, page.id)).toMatchObject({ description: "Short", markdown: body.replace("5 days", "2 days") })
  })

  it("neither patch nor description → 400 invalid_request, nothing written", async () => {
    const { kb, page } = await setup()
    const before = await snapshot(kb, page.id)
    const message = expectError(await patchPage(kb, page.id, {}), 400, "invalid_request")
    expect(message).toMatch(/patch|description/)
    await expectUnchanged(before, kb, page.id)
  })

  it("a description over 2000 characters → 400 invalid_request naming it, nothing written", async () => {
    const { kb, page } = await setup()
    const before = await snapshot(kb, page.id)
    const message = expectError(await patchPage(kb, page.id, { description: "d".repeat(2_001) }), 400, "invalid_request")
    expect(message).toMatch(/\bdescription\b/)
    await expectUnchanged(before, kb, page.id)
  })

  it("a folder with patch → 400 invalid_request, nothing written; description alone is applied", async () => {
    const kb = await newKnowledgebase()
    const folder = await made(kb, { title: "Folder", templateKey: "folder", description: "Old" })
    server.clock.advance(1_000)
    const before = await snapshot(kb, folder.id)
    expectError(await patchPage(kb, folder.id, { patch: [{ op: "append", text: "content" }] }), 400, "invalid_request")
    expectError(
      await patchPage(kb, folder.id, { description: "New", patch: [{ op: "prepend", text: "content" }] }),
      400,
      "invalid_request"
    )
    await expectUnchanged(before, kb, folder.id)

    const at = now()
    const ok = await patchPage(kb, folder.id, { description: "New" })
    expectApplied(ok, 200, { id: folder.id, description: "New", isFolder: true, updatedAt: at })
    expect(await readPage(kb, folder.id)).toMatchObject({ description: "New", markdown: "" })
    expect((await changes(kb)).map((c) => [c.type, c.change])).toEqual([
      ["folder", "created"],
      ["folder", "updated"]
    ])
    expect(await pageCount(kb)).toBe(0)
  })

  it("a patch making the body 256 KB or more → 413 payload_too_large, nothing written; just under is applied", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Big", bodyMarkdown: "a".repeat(262_000) })
    server.clock.advance(1_000)
    const before = await snapshot(kb, page.id)
    expectError(await patchPage(kb, page.id, { patch: [{ op: "append", text: "b".repeat(144) }] }), 413, "payload_too_large")
    expectError(
      await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: "a".repeat(10), newString: "c".repeat(200), replaceAll: true }] }),
      413,
      "payload_too_large"
    )
    await expectUnchanged(before, kb, page.id)
    expect((await patchPage(kb, page.id, { patch: [{ op: "append", text: "b".repeat(143) }] })).status).toBe(200)
    expect((await readPage(kb, page.id)).markdown).toHaveLength(262_143)
  })

  it("a 2 KB patch that doubles its body 26 times → 413 at once, nothing written, other clients unhindered", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Doubling", bodyMarkdown: "alpha beta gamma alpha" })
    server.clock.advance(1_000)
    const before = await snapshot(kb, page.id)
    const doubling = { op: "replace", oldString: "alpha", newString: "alpha alpha", replaceAll: true }
    const body = { patch: Array.from({ length: 26 }, () => doubling) }
    expect(JSON.stringify(body).length).toBeLessThan(2_200)
    const started = performance.now()
    const [refused, read] = await Promise.all([patchPage(kb, page.id, body), getPage(kb, page.id)])
    expect(performance.now() - started).toBeLessThan(1_500)
    expect(expectError(refused, 413, "payload_too_large")).toMatch(/^patch\[14\] \(replace\) would make the page body 256 KB or more/)
    expect(read.status).toBe(200)
    await expectUnchanged(before, kb, page.id)
    expect((await readPage(kb, page.id)).markdown).toBe("alpha beta gamma alpha")
  })

  it("an unknown page, or a page of another Knowledgebase → 404 not_found, nothing written", async () => {
    const { kb, page } = await setup()
    const other = await newKnowledgebase("default", "Other")
    const before = await snapshot(kb, page.id)
    expectError(await patchPage(kb, unknownId(), { description: "x" }), 404, "not_found")
    expectError(await patchPage(other, page.id, { patch: [{ op: "append", text: "x" }] }), 404, "not_found")
    await expectUnchanged(before, kb, page.id)
    expect(await changes(other)).toEqual([])
  })
})

describe("POST /knowledgebases/{id}/pages/{pageId}/append", () => {
  it("adds text to the end and answers like PATCH; the revision kind is append", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Log", bodyMarkdown: "Day 1" })
    server.clock.advance(1_000)
    const at = now()
    const response = await appendPage(kb, page.id, { text: "\nDay 2" })
    expectApplied(response, 200, { id: page.id, knowledgebaseId: kb, title: "Log", updatedAt: at })
    expect((await readPage(kb, page.id)).markdown).toBe("Day 1\nDay 2")
    const history = await listRevisions(kb, page.id)
    expect(history[0]).toMatchObject({ id: response.body.revisionId, number: 2, kind: "append", status: "applied", markdown: "Day 1\nDay 2" })
    expect(await changes(kb)).toEqual([
      { knowledgebaseId: kb, type: "page", id: page.id, change: "created", changedAt: page.createdAt },
      { knowledgebaseId: kb, type: "page", id: page.id, change: "updated", changedAt: at }
    ])
  })

  it("reports the links of the whole page after the append", async () => {
    const kb = await newKnowledgebase()
    const target = await made(kb, { title: "Target" })
    const page = await made(kb, { title: "Log", bodyMarkdown: "start" })
    const response = await appendPage(kb, page.id, { text: `\n\nSee [t](svcpage://${target.id}).` })
    expectApplied(response, 200, { id: page.id }, { pages: [{ id: target.id, title: "Target" }], sources: [], unresolved: [] })
    expect((await readPage(kb, target.id)).referencedBy).toEqual([{ id: page.id, title: "Log" }])
  })

  it("to a folder → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    const folder = await made(kb, { title: "Folder", templateKey: "folder" })
    const before = await snapshot(kb, folder.id)
    expectError(await appendPage(kb, folder.id, { text: "content" }), 400, "invalid_request")
    await expectUnchanged(before, kb, folder.id)
  })

  it.each([
    ["a missing text", {}, "text"],
    ["an empty text", { text: "" }, "text"],
    ["a numeric text", { text: 3 }, "text"],
    ["an unknown property", { text: "x", markdown: "y" }, "markdown"]
  ])("%s → 400 invalid_request naming it, nothing written", async (_case, body, field) => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Log", bodyMarkdown: "Day 1" })
    const before = await snapshot(kb, page.id)
    const message = expectError(await appendPage(kb, page.id, body), 400, "invalid_request")
    expect(message).toMatch(new RegExp(`\\b${field}\\b`))
    await expectUnchanged(before, kb, page.id)
  })

  it("making the body 256 KB or more → 413 payload_too_large, nothing written", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Big", bodyMarkdown: "a".repeat(262_143) })
    const before = await snapshot(kb, page.id)
    expectError(await appendPage(kb, page.id, { text: "b" }), 413, "payload_too_large")
    await expectUnchanged(before, kb, page.id)
  })

  it("concurrent appends are all kept, each as its own numbered revision", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Busy", bodyMarkdown: "" })
    const texts = Array.from({ length: 12 }, (_, i) => `<${i}>`)
    const responses = await Promise.all(texts.map((text) => appendPage(kb, page.id, { text })))
    expect(responses.map((r) => r.status)).toEqual(texts.map(() => 200))
    const markdown = (await readPage(kb, page.id)).markdown as string
    expect(markdown).toHaveLength(texts.join("").length)
    for (const text of texts) expect(markdown.split(text)).toHaveLength(2)
    const numbers = (await listRevisions(kb, page.id)).map((r) => r.number as number).sort((a, b) => a - b)
    expect(numbers).toEqual(Array.from({ length: 13 }, (_, i) => i + 1))
  })

  it("an unknown page, or a page of another Knowledgebase → 404 not_found", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase("default", "Other")
    const page = await made(kb, { title: "Log", bodyMarkdown: "x" })
    const before = await snapshot(kb, page.id)
    expectError(await appendPage(kb, unknownId(), { text: "y" }), 404, "not_found")
    expectError(await appendPage(other, page.id, { text: "y" }), 404, "not_found")
    await expectUnchanged(before, kb, page.id)
  })
})

describe("POST /knowledgebases/{id}/pages/{pageId}/move", () => {
  /** A tree: folder F > page P > page C > page G; folder E; top page T. */
  const tree = async () => {
    const kb = await newKnowledgebase()
    const F = await made(kb, { title: "F", templateKey: "folder" })
    const P = await made(kb, { title: "P", bodyMarkdown: "p", parentPageId: F.id })
    const C = await made(kb, { title: "C", bodyMarkdown: "c", parentPageId: P.id })
    const G = await made(kb, { title: "G", bodyMarkdown: "g", parentPageId: C.id })
    const E = await made(kb, { title: "E", templateKey: "folder" })
    const T = await made(kb, { title: "T", bodyMarkdown: "t" })
    server.clock.advance(1_000)
    return { kb, F, P, C, G, E, T }
  }

  it("into a folder: {ok, page} with the new parent; the folder lists it; the feed says moved", async () => {
    const { kb, T, E } = await tree()
    const at = now()
    const historyBefore = await listRevisions(kb, T.id)
    const response = await movePage(kb, T.id, { parentPageId: E.id })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({
      ok: true,
      page: expect.objectContaining({ id: T.id, knowledgebaseId: kb, title: "T", parentPageId: E.id, isFolder: false })
    })
    expect((await readPage(kb, T.id)).parentPageId).toBe(E.id)
    expect((await readPage(kb, T.id)).markdown).toBe("t")
    expect((await readPage(kb, E.id)).children).toEqual([{ id: T.id, title: "T", description: "", isFolder: false, childCount: 0 }])
    const feed = await changes(kb)
    expect(feed[feed.length - 1]).toEqual({ knowledgebaseId: kb, type: "page", id: T.id, change: "moved", changedAt: at })
    // Structural: nothing is rewritten, so no new revision.
    expect(await listRevisions(kb, T.id)).toEqual(historyBefore)
    expect(await pageCount(kb)).toBe(4)
  })

  it("into a page, and back to the top with null", async () => {
    const { kb, T, P, F } = await tree()
    expect((await movePage(kb, T.id, { parentPageId: P.id })).body.page.parentPageId).toBe(P.id)
    expect(byId((await readPage(kb, P.id)).children).map((c: any) => c.title).sort()).toEqual(["C", "T"])
    expect((await movePage(kb, P.id, { parentPageId: null })).body.page.parentPageId).toBeNull()
    expect((await readPage(kb, P.id)).parentPageId).toBeNull()
    expect((await readPage(kb, F.id)).children).toEqual([])
    // P's sub-pages travel with it.
    expect((await readPage(kb, T.id)).parentPageId).toBe(P.id)
  })

  it("a folder moves too; the moved entry has type folder", async () => {
    const { kb, E, F } = await tree()
    const response = await movePage(kb, E.id, { parentPageId: F.id })
    expect(response.status).toBe(200)
    expect(response.body.page).toMatchObject({ id: E.id, parentPageId: F.id, isFolder: true })
    const feed = await changes(kb)
    expect(feed[feed.length - 1]).toMatchObject({ type: "folder", id: E.id, change: "moved" })
  })

  it.each([
    ["into itself", "self"],
    ["into its child", "child"],
    ["into its grandchild", "grandchild"]
  ])("%s → 400 invalid_request naming parentPageId, nothing written", async (_case, where) => {
    const { kb, P, C, G } = await tree()
    const target = where === "self" ? P.id : where === "child" ? C.id : G.id
    const before = await snapshot(kb, P.id)
    const message = expectError(await movePage(kb, P.id, { parentPageId: target }), 400, "invalid_request")
    expect(message).toMatch(/\bparentPageId\b/)
    await expectUnchanged(before, kb, P.id)
    expect((await readPage(kb, C.id)).parentPageId).toBe(P.id)
  })

  it("a folder into its own sub-page → 400 invalid_request", async () => {
    const { kb, F, G } = await tree()
    const before = await snapshot(kb, F.id)
    expectError(await movePage(kb, F.id, { parentPageId: G.id }), 400, "invalid_request")
    await expectUnchanged(before, kb, F.id)
  })

  it("into a page of another Knowledgebase, or an unknown parent → 404 not_found, nothing written", async () => {
    const { kb, T } = await tree()
    const other = await newKnowledgebase("default", "Other")
    const foreign = await made(other, { title: "Foreign", templateKey: "folder" })
    const before = await snapshot(kb, T.id)
    expectError(await movePage(kb, T.id, { parentPageId: foreign.id }), 404, "not_found")
    expectError(await movePage(kb, T.id, { parentPageId: unknownId() }), 404, "not_found")
    await expectUnchanged(before, kb, T.id)
    expect((await readPage(other, foreign.id)).children).toEqual([])
  })

  it("an unknown page, or a page moved through another Knowledgebase → 404 not_found", async () => {
    const { kb, T, E } = await tree()
    const other = await newKnowledgebase("default", "Other")
    const before = await snapshot(kb, T.id)
    expectError(await movePage(kb, unknownId(), { parentPageId: null }), 404, "not_found")
    expectError(await movePage(other, T.id, { parentPageId: null }), 404, "not_found")
    expectError(await movePage(other, T.id, { parentPageId: E.id }), 404, "not_found")
    await expectUnchanged(before, kb, T.id)
  })

  it.each([
    ["a missing parentPageId", {}, "parentPageId"],
    ["a malformed parentPageId", { parentPageId: "folder-1" }, "parentPageId"],
    ["an unknown property", { parentPageId: null, position: 1 }, "position"]
  ])("%s → 400 invalid_request naming it", async (_case, body, field) => {
    const { kb, T } = await tree()
    const before = await snapshot(kb, T.id)
    const message = expectError(await movePage(kb, T.id, body), 400, "invalid_request")
    expect(message).toMatch(new RegExp(`\\b${field}\\b`))
    await expectUnchanged(before, kb, T.id)
  })
})

describe("links inside markdown", () => {
  it("svcpage:// links to pages of the same Knowledgebase resolve with their titles", async () => {
    const kb = await newKnowledgebase()
    const a = await made(kb, { title: "Alpha" })
    const folder = await made(kb, { title: "Folder", templateKey: "folder" })
    const response = await createPage(kb, {
      title: "Hub",
      bodyMarkdown: `Links: [a](svcpage://${a.id}), [again](svcpage://${a.id}) and <svcpage://${folder.id}>.`
    })
    expectApplied(response, 201, { title: "Hub" }, expect.any(Object))
    expect(response.body.links.sources).toEqual([])
    expect(response.body.links.unresolved).toEqual([])
    expect(byId(response.body.links.pages)).toEqual(
      byId([
        { id: a.id, title: "Alpha" },
        { id: folder.id, title: "Folder" }
      ])
    )
    const hub = await readPage(kb, response.body.page.id)
    expect(byId(hub.relatedPages)).toEqual(byId([{ id: a.id, title: "Alpha" }, { id: folder.id, title: "Folder" }]))
    expect((await readPage(kb, a.id)).referencedBy).toEqual([{ id: hub.id, title: "Hub" }])
    expect((await readPage(kb, folder.id)).referencedBy).toEqual([{ id: hub.id, title: "Hub" }])
  })

  it("ids of another Knowledgebase, unknown ids and malformed ids are unresolved and not stored", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase("default", "Other")
    const foreign = await made(other, { title: "Foreign" })
    const unknown = unknownId()
    const response = await createPage(kb, {
      title: "Dangling",
      bodyMarkdown: `[f](svcpage://${foreign.id}) [u](svcpage://${unknown}) [bad](svcpage://not-an-id)`
    })
    expectApplied(response, 201, {}, {
      pages: [],
      sources: [],
      unresolved: [
        { kind: "page", id: foreign.id },
        { kind: "page", id: unknown },
        { kind: "page", id: "not-an-id" }
      ]
    })
    const read = await readPage(kb, response.body.page.id)
    expect(read.relatedPages).toEqual([])
    expect((await readPage(other, foreign.id)).referencedBy).toEqual([])
  })

  it("links in code blocks and inline code do not count", async () => {
    const kb = await newKnowledgebase()
    const a = await made(kb, { title: "Alpha" })
    const response = await createPage(kb, {
      title: "Code",
      bodyMarkdown: [
        "```markdown",
        `[a](svcpage://${a.id})`,
        "```",
        "",
        `    [indented](svcpage://${a.id})`,
        "",
        `Inline \`[a](svcpage://${a.id})\` and bare svcpage://${a.id} text.`
      ].join("\n")
    })
    expectApplied(response, 201, {}, noLinks)
    expect((await readPage(kb, response.body.page.id)).relatedPages).toEqual([])
    expect((await readPage(kb, a.id)).referencedBy).toEqual([])
  })

  it("svcsource:// ids are unresolved while the Knowledgebase has no sources", async () => {
    const kb = await newKnowledgebase()
    const source = unknownId()
    const response = await createPage(kb, { title: "Files", bodyMarkdown: `See [the pdf](svcsource://${source}).` })
    expectApplied(response, 201, {}, { pages: [], sources: [], unresolved: [{ kind: "source", id: source }] })
    expect((await readPage(kb, response.body.page.id)).attachedFiles).toEqual([])
  })

  it("relatedPages and referencedBy follow edits that add and remove links", async () => {
    const kb = await newKnowledgebase()
    const a = await made(kb, { title: "Alpha" })
    const b = await made(kb, { title: "Beta" })
    const page = await made(kb, { title: "Hub", bodyMarkdown: `Start [a](svcpage://${a.id}).` })
    expect((await readPage(kb, a.id)).referencedBy).toEqual([{ id: page.id, title: "Hub" }])

    const added = await patchPage(kb, page.id, { patch: [{ op: "append", text: ` Then [b](svcpage://${b.id}).` }] })
    expect(added.status).toBe(200)
    expect(byId(added.body.links.pages)).toEqual(byId([{ id: a.id, title: "Alpha" }, { id: b.id, title: "Beta" }]))
    expect(byId((await readPage(kb, page.id)).relatedPages)).toEqual(byId([{ id: a.id, title: "Alpha" }, { id: b.id, title: "Beta" }]))
    expect((await readPage(kb, b.id)).referencedBy).toEqual([{ id: page.id, title: "Hub" }])

    const removed = await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: `Start [a](svcpage://${a.id}).`, newString: "Start." }] })
    expect(removed.status).toBe(200)
    expect(removed.body.links).toEqual({ pages: [{ id: b.id, title: "Beta" }], sources: [], unresolved: [] })
    expect((await readPage(kb, page.id)).relatedPages).toEqual([{ id: b.id, title: "Beta" }])
    expect((await readPage(kb, a.id)).referencedBy).toEqual([])
    expect((await readPage(kb, b.id)).referencedBy).toEqual([{ id: page.id, title: "Hub" }])

    // A description-only edit keeps the links.
    expect((await patchPage(kb, page.id, { description: "d" })).body.links).toEqual({
      pages: [{ id: b.id, title: "Beta" }],
      sources: [],
      unresolved: []
    })
    expect((await readPage(kb, b.id)).referencedBy).toEqual([{ id: page.id, title: "Hub" }])

    // Two pages referencing the same target are both listed.
    const other = await made(kb, { title: "Other hub", bodyMarkdown: `[b](svcpage://${b.id})` })
    expect(byId((await readPage(kb, b.id)).referencedBy)).toEqual(byId([{ id: page.id, title: "Hub" }, { id: other.id, title: "Other hub" }]))
  })

  it("a refused edit leaves the links as they were", async () => {
    const kb = await newKnowledgebase()
    const a = await made(kb, { title: "Alpha" })
    const page = await made(kb, { title: "Hub", bodyMarkdown: `[a](svcpage://${a.id})` })
    expectError(
      await patchPage(kb, page.id, {
        patch: [
          { op: "replace", oldString: `[a](svcpage://${a.id})`, newString: "gone" },
          { op: "insert_after", anchor: "missing", text: "x" }
        ]
      }),
      400,
      "invalid_request"
    )
    expect((await readPage(kb, page.id)).relatedPages).toEqual([{ id: a.id, title: "Alpha" }])
    expect((await readPage(kb, a.id)).referencedBy).toEqual([{ id: page.id, title: "Hub" }])
  })
})

describe("GET /knowledgebases/{id}/pages/{pageId}/revisions", () => {
  const historyOf = async () => {
    const kb = await newKnowledgebase()
    const times: Array<string> = []
    times.push(now())
    const page = await made(kb, { title: "History", bodyMarkdown: "v1" })
    server.clock.advance(1_000)
    times.push(now())
    expect((await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: "v1", newString: "v2" }] })).status).toBe(200)
    server.clock.advance(1_000)
    times.push(now())
    expect((await appendPage(kb, page.id, { text: " v3" })).status).toBe(200)
    server.clock.advance(1_000)
    times.push(now())
    expect((await patchPage(kb, page.id, { description: "described" })).status).toBe(200)
    return { kb, page, times }
  }

  it("lists every version newest first with numbers, kinds, statuses and content", async () => {
    const { kb, page, times } = await historyOf()
    const response = await revisions(kb, page.id)
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(["nextCursor", "revisions"])
    expect(response.body.nextCursor).toBeNull()
    const revision = (number: number, kind: string, markdown: string, description: string, createdAt: string) => ({
      id: expect.stringMatching(uuidPattern),
      number,
      kind,
      status: "applied",
      title: "History",
      description,
      markdown,
      author: expect.any(String),
      createdAt,
      reviewedAt: null
    })
    expect(response.body.revisions).toEqual([
      revision(4, "edit", "v2 v3", "described", times[3]!),
      revision(3, "append", "v2 v3", "", times[2]!),
      revision(2, "edit", "v2", "", times[1]!),
      revision(1, "create", "v1", "", times[0]!)
    ])
  })

  it("keeps newest first when several versions share a millisecond", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Burst", bodyMarkdown: "0" })
    for (let i = 1; i <= 8; i++) {
      expect((await appendPage(kb, page.id, { text: String(i) })).status).toBe(200)
    }
    const history = await listRevisions(kb, page.id)
    expect(history.map((r) => r.number)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1])
    expect(history.map((r) => r.markdown)).toEqual(["012345678", "01234567", "0123456", "012345", "01234", "0123", "012", "01", "0"])
  })

  it("fields narrows each revision; an unknown field → 400 invalid_request naming it", async () => {
    const { kb, page } = await historyOf()
    const response = await revisions(kb, page.id, "?fields=number,kind")
    expect(response.status).toBe(200)
    expect(response.body.revisions).toEqual([
      { number: 4, kind: "edit" },
      { number: 3, kind: "append" },
      { number: 2, kind: "edit" },
      { number: 1, kind: "create" }
    ])
    const message = expectError(await revisions(kb, page.id, "?fields=number,diff"), 400, "invalid_request")
    expect(message).toMatch(/\bdiff\b/)
  })

  it("pages with limit and cursor; a bad cursor or limit → 400 invalid_request", async () => {
    const { kb, page } = await historyOf()
    const seen: Array<number> = []
    let cursor: string | null = null
    do {
      const query: string = cursor === null ? "?limit=3" : `?limit=3&cursor=${encodeURIComponent(cursor)}`
      const response = await revisions(kb, page.id, query)
      expect(response.status).toBe(200)
      expect(response.body.revisions.length).toBeLessThanOrEqual(3)
      seen.push(...response.body.revisions.map((r: any) => r.number))
      cursor = response.body.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual([4, 3, 2, 1])
    expectError(await revisions(kb, page.id, "?cursor=garbage"), 400, "invalid_request")
    expectError(await revisions(kb, page.id, "?limit=0"), 400, "invalid_request")
    expectError(await revisions(kb, page.id, "?limit=201"), 400, "invalid_request")

    // A cursor of one page's history is not a cursor of another's.
    const other = await made(kb, { title: "Other", bodyMarkdown: "x" })
    const first = await revisions(kb, page.id, "?limit=1")
    expectError(await revisions(kb, other.id, `?cursor=${encodeURIComponent(first.body.nextCursor)}`), 400, "invalid_request")
  })

  it("an unknown page, or a page of another Knowledgebase → 404 not_found", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase("default", "Other")
    const page = await made(kb, { title: "Mine" })
    expectError(await revisions(kb, unknownId()), 404, "not_found")
    expectError(await revisions(other, page.id), 404, "not_found")
  })

  it("records the author: the member of a personal key", async () => {
    const kb = await newKnowledgebase()
    const member = await personalKey(server, { email: "writer@pages.test", role: "member" })
    const page = await made(kb, { title: "Authored", bodyMarkdown: "a" }, { key: member })
    expect((await appendPage(kb, page.id, { text: "b" }, { key: member })).status).toBe(200)
    const history = await listRevisions(kb, page.id)
    expect(history.map((r) => r.author)).toEqual(["writer@pages.test", "writer@pages.test"])
  })
})

describe("scopes", () => {
  it("knowledge:read reads but cannot write: 403 insufficient_scope, nothing written", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Guarded", bodyMarkdown: "keep" })
    const folder = await made(kb, { title: "Folder", templateKey: "folder" })
    const reader = await server.createKey({ name: "reader", scopes: ["knowledge:read"] })
    expect((await getPage(kb, page.id, { key: reader })).status).toBe(200)
    expect((await revisions(kb, page.id, "", { key: reader })).status).toBe(200)
    const before = await snapshot(kb, page.id)
    expectError(await createPage(kb, { title: "No" }, { key: reader }), 403, "insufficient_scope")
    expectError(await patchPage(kb, page.id, { description: "No" }, { key: reader }), 403, "insufficient_scope")
    expectError(await appendPage(kb, page.id, { text: "No" }, { key: reader }), 403, "insufficient_scope")
    expectError(await movePage(kb, page.id, { parentPageId: folder.id }, { key: reader }), 403, "insufficient_scope")
    await expectUnchanged(before, kb, page.id)
  })

  it("knowledge:write without knowledge:read cannot read pages", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Write only" })
    const writer = await server.createKey({ name: "writer", scopes: ["knowledge:write"] })
    expectError(await getPage(kb, page.id, { key: writer }), 403, "insufficient_scope")
    expectError(await revisions(kb, page.id, "", { key: writer }), 403, "insufficient_scope")
    expect((await appendPage(kb, page.id, { text: "w" }, { key: writer })).status).toBe(200)
  })

  it("a viewer's personal key reads but cannot PATCH, append, create or move; a member's can", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Team page", bodyMarkdown: "team" })
    const viewer = await personalKey(server, { email: "viewer@pages.test", role: "viewer" })
    expect((await getPage(kb, page.id, { key: viewer })).status).toBe(200)
    const before = await snapshot(kb, page.id)
    expectError(await patchPage(kb, page.id, { patch: [{ op: "append", text: "!" }] }, { key: viewer }), 403, "insufficient_scope")
    expectError(await patchPage(kb, page.id, { description: "viewer" }, { key: viewer }), 403, "insufficient_scope")
    expectError(await appendPage(kb, page.id, { text: "!" }, { key: viewer }), 403, "insufficient_scope")
    expectError(await createPage(kb, { title: "By viewer" }, { key: viewer }), 403, "insufficient_scope")
    expectError(await movePage(kb, page.id, { parentPageId: null }, { key: viewer }), 403, "insufficient_scope")
    await expectUnchanged(before, kb, page.id)

    const member = await personalKey(server, { email: "member@pages.test", role: "member" })
    expect((await patchPage(kb, page.id, { patch: [{ op: "append", text: "!" }] }, { key: member })).status).toBe(200)
    expect((await readPage(kb, page.id)).markdown).toBe("team!")
  })

  it("no key → 401 unauthorized; an unknown key → 401 invalid_api_key", async () => {
    const kb = await newKnowledgebase()
    const page = await made(kb, { title: "Locked" })
    expectError(await server.request("PATCH", `/knowledgebases/${kb}/pages/${page.id}`, { key: null, body: { description: "x" } }), 401, "unauthorized")
    expectError(await patchPage(kb, page.id, { description: "x" }, { key: "sk_nope" }), 401, "invalid_api_key")
    expect((await readPage(kb, page.id)).description).toBe("")
  })
})
