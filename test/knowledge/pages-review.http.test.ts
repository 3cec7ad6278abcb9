/**
 * Page writes when the organization reviews agent writes (the `review` gate): create, append and
 * edit answer 202 `pending_review` and leave the live page untouched until a person approves in
 * the dashboard (here: `PageService.approve` / `reject` through the admin handle). Folders and
 * moves are structural and never wait for review.
 */
import { Effect, Either } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { PageService } from "../../server/knowledge/pages/service.js"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, insertKnowledgebases, organizationId, unknownId } from "../support/fixtures.js"
import { isoPattern, uuidPattern } from "../support/patterns.js"
import { startTestServer, type TestResponse, type TestServer } from "../support/server.js"

let server: TestServer
let orgId: string
beforeAll(async () => {
  server = await startTestServer()
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["review"] })))
  orgId = await organizationId(server)
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

const newKnowledgebase = async (org = "default", name = "Reviewed"): Promise<string> =>
  (await insertKnowledgebases(server, { org, count: 1, prefix: name }))[0]!.id
const createPage = (kb: string, body: unknown, opts?: Opts) =>
  server.request("POST", `/knowledgebases/${kb}/pages`, { body, ...withKey(opts) })
const getPage = (kb: string, pageId: string) => server.request("GET", `/knowledgebases/${kb}/pages/${pageId}`)
const readPage = async (kb: string, pageId: string) => {
  const response = await getPage(kb, pageId)
  expect(response.status).toBe(200)
  return response.body.page
}
const patchPage = (kb: string, pageId: string, body: unknown) =>
  server.request("PATCH", `/knowledgebases/${kb}/pages/${pageId}`, { body })
const appendPage = (kb: string, pageId: string, body: unknown) =>
  server.request("POST", `/knowledgebases/${kb}/pages/${pageId}/append`, { body })
const movePage = (kb: string, pageId: string, body: unknown) =>
  server.request("POST", `/knowledgebases/${kb}/pages/${pageId}/move`, { body })
const listRevisions = async (kb: string, pageId: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/pages/${pageId}/revisions?limit=200`)
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

const approve = (revisionId: string, org = orgId) =>
  server.admin(Effect.either(Effect.flatMap(PageService, (p) => p.approve(org, revisionId))))
const reject = (revisionId: string, org = orgId) =>
  server.admin(Effect.either(Effect.flatMap(PageService, (p) => p.reject(org, revisionId))))
const pendingReviews = () => server.admin(Effect.flatMap(PageService, (p) => p.pendingReviews(orgId)))

/** Asserts that an admin review call succeeded and returns its value. */
const succeeded = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) throw new Error(`expected success, got ${JSON.stringify(result.left)}`)
  return result.right
}
/** Asserts that an admin review call failed with `tag` and returns the error. */
const failedWith = <A, E>(result: Either.Either<A, E>, tag: string): E & { _tag: string; message: string } => {
  expect(Either.isLeft(result)).toBe(true)
  const error = (result as Either.Left<E, A>).left as E & { _tag: string; message: string }
  expect(error._tag).toBe(tag)
  return error
}

/** Asserts a 202 pending_review write answer. */
const expectPending = (response: TestResponse, page: Record<string, unknown>, links: unknown = noLinks) => {
  expect(response.status).toBe(202)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  expect(response.body).toEqual({
    status: "pending_review",
    page: expect.objectContaining(page),
    revisionId: expect.stringMatching(uuidPattern),
    reviewPath: expect.any(String),
    links
  })
  expect(response.body.reviewPath.length).toBeGreaterThan(0)
}

/** A live page: created (pending) and approved. */
const livePage = async (kb: string, body: Record<string, unknown>) => {
  const created = await createPage(kb, body)
  expect(created.status).toBe(202)
  succeeded(await approve(created.body.revisionId))
  // Later revisions get a later timestamp (same-millisecond ordering is covered in pages.test.ts).
  server.clock.advance(1)
  return created.body.page as { id: string; title: string }
}

/** Everything a write could touch. */
const snapshot = async (kb: string, pageId: string) => ({
  page: (await getPage(kb, pageId)).body,
  revisions: await listRevisions(kb, pageId),
  changes: await changes(kb),
  knowledgebase: await knowledgebase(kb)
})

describe("create under review", () => {
  it("answers 202 pending_review with reviewPath; the page is not readable and not counted until approved", async () => {
    const kb = await newKnowledgebase()
    const kbBefore = await knowledgebase(kb)
    const response = await createPage(kb, { title: "Proposal", bodyMarkdown: "# Proposal\n\nDraft text." })
    expectPending(response, {
      id: expect.stringMatching(uuidPattern),
      knowledgebaseId: kb,
      title: "Proposal",
      templateKey: "page",
      parentPageId: null,
      isFolder: false
    })
    const pageId = response.body.page.id as string

    expectError(await getPage(kb, pageId), 404, "not_found")
    expect(await knowledgebase(kb)).toEqual(kbBefore)
    expect(await changes(kb)).toEqual([])
    expect(await pendingReviews()).toContainEqual(
      expect.objectContaining({ id: response.body.revisionId, kind: "page_create", knowledgebaseId: kb, pageId, title: "Proposal" })
    )

    const approved = succeeded(await approve(response.body.revisionId))
    expect(approved).toMatchObject({ id: response.body.revisionId, status: "applied" })

    const page = await readPage(kb, pageId)
    expect(page).toMatchObject({ id: pageId, title: "Proposal", markdown: "# Proposal\n\nDraft text.", isFolder: false })
    const history = await listRevisions(kb, pageId)
    expect(history).toEqual([
      expect.objectContaining({
        id: response.body.revisionId,
        number: 1,
        kind: "create",
        status: "applied",
        markdown: "# Proposal\n\nDraft text.",
        reviewedAt: expect.stringMatching(isoPattern)
      })
    ])
    expect(await changes(kb)).toEqual([
      { knowledgebaseId: kb, type: "page", id: pageId, change: "created", changedAt: expect.stringMatching(isoPattern) }
    ])
    expect((await knowledgebase(kb)).counts.pages).toBe(1)
    expect((await pendingReviews()).map((r) => r.id)).not.toContain(response.body.revisionId)
  })

  it("a pending page under a folder appears among the folder's children once approved", async () => {
    const kb = await newKnowledgebase()
    const folder = await createPage(kb, { title: "Folder", templateKey: "folder" })
    expect(folder.status).toBe(201)
    const child = await createPage(kb, { title: "Child", bodyMarkdown: "c", parentPageId: folder.body.page.id })
    expectPending(child, { parentPageId: folder.body.page.id })
    expect((await readPage(kb, folder.body.page.id)).children).toEqual([])
    succeeded(await approve(child.body.revisionId))
    expect((await readPage(kb, folder.body.page.id)).children).toEqual([
      { id: child.body.page.id, title: "Child", description: "", isFolder: false, childCount: 0 }
    ])
  })

  it("an Idempotency-Key replay returns the 202 again and proposes once", async () => {
    const kb = await newKnowledgebase()
    const headers = { "idempotency-key": "review-create-1" }
    const first = await createPage(kb, { title: "Once" }, { headers })
    expect(first.status).toBe(202)
    const second = await createPage(kb, { title: "Once" }, { headers })
    expect(second.status).toBe(202)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect((await pendingReviews()).filter((r) => r.knowledgebaseId === kb)).toHaveLength(1)
  })

  it("refused creates propose nothing", async () => {
    const kb = await newKnowledgebase()
    const before = (await pendingReviews()).length
    expectError(await createPage(kb, { title: "Too big", bodyMarkdown: "a".repeat(262_144) }), 413, "payload_too_large")
    expectError(await createPage(kb, { title: "Orphan", parentPageId: unknownId() }), 404, "not_found")
    expectError(await createPage(kb, { title: "" }), 400, "invalid_request")
    expect(await pendingReviews()).toHaveLength(before)
    expect(await changes(kb)).toEqual([])
  })

  it("a pending page cannot be edited, appended to, moved, read for revisions or used as a parent", async () => {
    const kb = await newKnowledgebase()
    const folder = await createPage(kb, { title: "Folder", templateKey: "folder" })
    const pending = await createPage(kb, { title: "Pending", bodyMarkdown: "p" })
    expect(pending.status).toBe(202)
    const id = pending.body.page.id as string
    const pendingBefore = (await pendingReviews()).length
    expectError(await patchPage(kb, id, { description: "x" }), 404, "not_found")
    expectError(await appendPage(kb, id, { text: "x" }), 404, "not_found")
    expectError(await movePage(kb, id, { parentPageId: folder.body.page.id }), 404, "not_found")
    expectError(await movePage(kb, folder.body.page.id, { parentPageId: id }), 404, "not_found")
    expectError(await createPage(kb, { title: "Child", parentPageId: id }), 404, "not_found")
    expectError(await server.request("GET", `/knowledgebases/${kb}/pages/${id}/revisions`), 404, "not_found")
    expect(await pendingReviews()).toHaveLength(pendingBefore)
    expect((await readPage(kb, folder.body.page.id)).parentPageId).toBeNull()
  })

  it("links of a pending create resolve in the answer but count only once approved", async () => {
    const kb = await newKnowledgebase()
    const target = await livePage(kb, { title: "Target" })
    const response = await createPage(kb, { title: "Linker", bodyMarkdown: `[t](svcpage://${target.id})` })
    expectPending(response, { title: "Linker" }, { pages: [{ id: target.id, title: "Target" }], sources: [], unresolved: [] })
    expect((await readPage(kb, target.id)).referencedBy).toEqual([])
    succeeded(await approve(response.body.revisionId))
    expect((await readPage(kb, target.id)).referencedBy).toEqual([{ id: response.body.page.id, title: "Linker" }])
    expect((await readPage(kb, response.body.page.id)).relatedPages).toEqual([{ id: target.id, title: "Target" }])
  })

  it("rejecting a pending create leaves no page", async () => {
    const kb = await newKnowledgebase()
    const response = await createPage(kb, { title: "Rejected", bodyMarkdown: "no" })
    expect(response.status).toBe(202)
    expect(succeeded(await reject(response.body.revisionId))).toMatchObject({ status: "rejected" })
    expectError(await getPage(kb, response.body.page.id), 404, "not_found")
    expect(await changes(kb)).toEqual([])
    expect((await knowledgebase(kb)).counts.pages).toBe(0)
    failedWith(await approve(response.body.revisionId), "InvalidRequest")
    expectError(await getPage(kb, response.body.page.id), 404, "not_found")
  })
})

describe("edits under review", () => {
  const body = "# Policy\n\nRefunds take 5 days.\n"

  it("PATCH answers 202; the live page keeps its markdown; the revision waits with number null", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Policy", bodyMarkdown: body })
    server.clock.advance(1_000)
    const before = await snapshot(kb, page.id)
    const at = now()

    const response = await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: "5 days", newString: "3 days" }] })
    expectPending(response, { id: page.id, knowledgebaseId: kb, title: "Policy" })

    expect((await getPage(kb, page.id)).body).toEqual(before.page)
    expect(await changes(kb)).toEqual(before.changes)
    expect(await knowledgebase(kb)).toEqual(before.knowledgebase)
    const history = await listRevisions(kb, page.id)
    expect(history).toHaveLength(2)
    expect(history[0]).toEqual({
      id: response.body.revisionId,
      number: null,
      kind: "edit",
      status: "pending_review",
      title: "Policy",
      description: "",
      markdown: "# Policy\n\nRefunds take 3 days.\n",
      author: expect.any(String),
      createdAt: at,
      reviewedAt: null
    })
    expect(history[1]).toMatchObject({ number: 1, kind: "create", status: "applied" })

    succeeded(await approve(response.body.revisionId))
    expect((await readPage(kb, page.id)).markdown).toBe("# Policy\n\nRefunds take 3 days.\n")
    const after = await listRevisions(kb, page.id)
    expect(after[0]).toMatchObject({
      id: response.body.revisionId,
      number: 2,
      status: "applied",
      reviewedAt: expect.stringMatching(isoPattern)
    })
    expect(after[1]).toMatchObject({ number: 1 })
    const feed = await changes(kb)
    expect(feed).toEqual([
      { knowledgebaseId: kb, type: "page", id: page.id, change: "created", changedAt: expect.stringMatching(isoPattern) },
      { knowledgebaseId: kb, type: "page", id: page.id, change: "updated", changedAt: expect.stringMatching(isoPattern) }
    ])
  })

  it("append answers 202 and applies on approval", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Log", bodyMarkdown: "Day 1" })
    const response = await appendPage(kb, page.id, { text: "\nDay 2" })
    expectPending(response, { id: page.id })
    expect((await readPage(kb, page.id)).markdown).toBe("Day 1")
    expect((await listRevisions(kb, page.id))[0]).toMatchObject({ kind: "append", status: "pending_review", number: null, markdown: "Day 1\nDay 2" })
    succeeded(await approve(response.body.revisionId))
    expect((await readPage(kb, page.id)).markdown).toBe("Day 1\nDay 2")
    expect((await listRevisions(kb, page.id))[0]).toMatchObject({ kind: "append", status: "applied", number: 2 })
  })

  it("a description-only edit waits too", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Described", bodyMarkdown: "x" })
    const response = await patchPage(kb, page.id, { description: "New description" })
    expectPending(response, { id: page.id })
    expect((await readPage(kb, page.id)).description).toBe("")
    succeeded(await approve(response.body.revisionId))
    expect(await readPage(kb, page.id)).toMatchObject({ description: "New description", markdown: "x" })
  })

  it("approval applies the operation to the page as it is now, never wiping other approved changes", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Merge", bodyMarkdown: "middle" })
    const first = await appendPage(kb, page.id, { text: " end" })
    const second = await patchPage(kb, page.id, { patch: [{ op: "prepend", text: "start " }] })
    expect([first.status, second.status]).toEqual([202, 202])
    succeeded(await approve(second.body.revisionId))
    succeeded(await approve(first.body.revisionId))
    expect((await readPage(kb, page.id)).markdown).toBe("start middle end")
    const history = await listRevisions(kb, page.id)
    const numbered = Object.fromEntries(history.map((r) => [r.id, r.number]))
    expect(numbered[second.body.revisionId]).toBe(2)
    expect(numbered[first.body.revisionId]).toBe(3)
  })

  it("approving an edit whose anchor vanished in the meantime fails and writes nothing", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Race", bodyMarkdown: "Alpha beta gamma" })
    const stale = await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: "beta", newString: "BETA" }] })
    const winner = await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: "beta", newString: "delta" }] })
    expect([stale.status, winner.status]).toEqual([202, 202])
    succeeded(await approve(winner.body.revisionId))
    expect((await readPage(kb, page.id)).markdown).toBe("Alpha delta gamma")

    server.clock.advance(1_000)
    const before = await snapshot(kb, page.id)
    const error = failedWith(await approve(stale.body.revisionId), "InvalidRequest")
    expect(error.message).toContain("patch[0] (replace)")
    expect(await snapshot(kb, page.id)).toEqual(before)
    const staleRevision = (await listRevisions(kb, page.id)).find((r) => r.id === stale.body.revisionId)
    expect(staleRevision).toMatchObject({ status: "pending_review", number: null, reviewedAt: null })
    expect((await pendingReviews()).map((r) => r.id)).toContain(stale.body.revisionId)

    // It can still be rejected.
    succeeded(await reject(stale.body.revisionId))
    expect((await listRevisions(kb, page.id)).find((r) => r.id === stale.body.revisionId)).toMatchObject({ status: "rejected" })
  })

  it("links added by a pending edit count only once approved; a rejected one never", async () => {
    const kb = await newKnowledgebase()
    const target = await livePage(kb, { title: "Target" })
    const page = await livePage(kb, { title: "Hub", bodyMarkdown: "hub" })
    const text = ` [t](svcpage://${target.id})`
    const rejected = await appendPage(kb, page.id, { text })
    expectPending(rejected, { id: page.id }, { pages: [{ id: target.id, title: "Target" }], sources: [], unresolved: [] })
    expect((await readPage(kb, target.id)).referencedBy).toEqual([])
    expect((await readPage(kb, page.id)).relatedPages).toEqual([])
    succeeded(await reject(rejected.body.revisionId))
    expect((await readPage(kb, target.id)).referencedBy).toEqual([])

    const approved = await appendPage(kb, page.id, { text })
    succeeded(await approve(approved.body.revisionId))
    expect((await readPage(kb, target.id)).referencedBy).toEqual([{ id: page.id, title: "Hub" }])
  })

  it("approving an edit that would make the body 256 KB or more fails and writes nothing", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Growing", bodyMarkdown: "" })
    const first = await appendPage(kb, page.id, { text: "a".repeat(200_000) })
    const second = await appendPage(kb, page.id, { text: "b".repeat(62_144) })
    expect([first.status, second.status]).toEqual([202, 202])
    succeeded(await approve(first.body.revisionId))
    const before = await snapshot(kb, page.id)
    failedWith(await approve(second.body.revisionId), "PayloadTooLarge")
    expect(await snapshot(kb, page.id)).toEqual(before)
    expect((await readPage(kb, page.id)).markdown).toHaveLength(200_000)
  })

  it("reject keeps the live page and marks the revision rejected", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Keep", bodyMarkdown: "Original" })
    const response = await patchPage(kb, page.id, { patch: [{ op: "replace", oldString: "Original", newString: "Replaced" }] })
    expect(response.status).toBe(202)
    const before = await snapshot(kb, page.id)
    expect(succeeded(await reject(response.body.revisionId))).toEqual({ id: response.body.revisionId, status: "rejected" })
    expect((await getPage(kb, page.id)).body).toEqual(before.page)
    expect((await readPage(kb, page.id)).markdown).toBe("Original")
    expect(await changes(kb)).toEqual(before.changes)
    expect(await knowledgebase(kb)).toEqual(before.knowledgebase)
    const history = await listRevisions(kb, page.id)
    expect(history[0]).toMatchObject({
      id: response.body.revisionId,
      status: "rejected",
      number: null,
      markdown: "Replaced",
      reviewedAt: expect.stringMatching(isoPattern)
    })
    expect(history[1]).toMatchObject({ number: 1, status: "applied" })
  })

  it("approving twice fails and applies once; settled items cannot be approved or rejected again", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Twice", bodyMarkdown: "a" })
    const response = await appendPage(kb, page.id, { text: "b" })
    succeeded(await approve(response.body.revisionId))
    const before = await snapshot(kb, page.id)
    failedWith(await approve(response.body.revisionId), "InvalidRequest")
    failedWith(await reject(response.body.revisionId), "InvalidRequest")
    expect(await snapshot(kb, page.id)).toEqual(before)
    expect((await readPage(kb, page.id)).markdown).toBe("ab")

    const rejected = await appendPage(kb, page.id, { text: "c" })
    succeeded(await reject(rejected.body.revisionId))
    failedWith(await approve(rejected.body.revisionId), "InvalidRequest")
    failedWith(await reject(rejected.body.revisionId), "InvalidRequest")
    expect((await readPage(kb, page.id)).markdown).toBe("ab")
  })

  it("an unknown review item, or one of another organization → NotFound", async () => {
    failedWith(await approve(unknownId()), "NotFound")
    failedWith(await reject(unknownId()), "NotFound")
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Ours", bodyMarkdown: "ours" })
    const pending = await appendPage(kb, page.id, { text: "!" })
    await server.createOrganization("review-elsewhere")
    const otherOrg = await organizationId(server, "review-elsewhere")
    failedWith(await approve(pending.body.revisionId, otherOrg), "NotFound")
    failedWith(await reject(pending.body.revisionId, otherOrg), "NotFound")
    expect((await readPage(kb, page.id)).markdown).toBe("ours")
    expect((await listRevisions(kb, page.id))[0]).toMatchObject({ status: "pending_review" })
  })

  it("refused edits propose nothing: missing anchors, 413, folders", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Strict", bodyMarkdown: "only once" })
    const before = await snapshot(kb, page.id)
    const pendingBefore = (await pendingReviews()).length
    expect(
      expectError(await patchPage(kb, page.id, { patch: [{ op: "insert_after", anchor: "missing", text: "x" }] }), 400, "invalid_request")
    ).toContain("patch[0] (insert_after)")
    expectError(await appendPage(kb, page.id, { text: "a".repeat(262_144) }), 413, "payload_too_large")
    expectError(await patchPage(kb, page.id, {}), 400, "invalid_request")
    expect(await snapshot(kb, page.id)).toEqual(before)
    expect(await pendingReviews()).toHaveLength(pendingBefore)
  })
})

describe("structural writes do not wait for review", () => {
  it("a folder is created at once (201 applied) and takes a description at once (200 applied)", async () => {
    const kb = await newKnowledgebase()
    const at = now()
    const folder = await createPage(kb, { title: "Folder", templateKey: "folder", description: "Old" })
    expect(folder.status).toBe(201)
    expect(folder.body).toMatchObject({ status: "applied", reviewPath: null, page: { isFolder: true, templateKey: "folder" } })
    expect(await readPage(kb, folder.body.page.id)).toMatchObject({ title: "Folder", description: "Old", isFolder: true })
    expect(await changes(kb)).toEqual([{ knowledgebaseId: kb, type: "folder", id: folder.body.page.id, change: "created", changedAt: at }])
    expect((await knowledgebase(kb)).counts.pages).toBe(0)

    server.clock.advance(1_000)
    const described = await patchPage(kb, folder.body.page.id, { description: "New" })
    expect(described.status).toBe(200)
    expect(described.body).toMatchObject({ status: "applied", reviewPath: null, page: { description: "New" } })
    expect((await readPage(kb, folder.body.page.id)).description).toBe("New")
    expect((await listRevisions(kb, folder.body.page.id)).map((r) => [r.number, r.kind, r.status])).toEqual([
      [2, "edit", "applied"],
      [1, "create", "applied"]
    ])
    expectError(await appendPage(kb, folder.body.page.id, { text: "content" }), 400, "invalid_request")
  })

  it("a move applies at once (200) and shows in the feed as moved", async () => {
    const kb = await newKnowledgebase()
    const folder = await createPage(kb, { title: "Folder", templateKey: "folder" })
    const page = await livePage(kb, { title: "Mover", bodyMarkdown: "m" })
    server.clock.advance(1_000)
    const at = now()
    const pendingBefore = (await pendingReviews()).length
    const moved = await movePage(kb, page.id, { parentPageId: folder.body.page.id })
    expect(moved.status).toBe(200)
    expect(moved.body).toEqual({ ok: true, page: expect.objectContaining({ id: page.id, parentPageId: folder.body.page.id }) })
    expect((await readPage(kb, page.id)).parentPageId).toBe(folder.body.page.id)
    const feed = await changes(kb)
    expect(feed[feed.length - 1]).toEqual({ knowledgebaseId: kb, type: "page", id: page.id, change: "moved", changedAt: at })
    expect(await pendingReviews()).toHaveLength(pendingBefore)

    expect((await movePage(kb, page.id, { parentPageId: null })).status).toBe(200)
    expect((await readPage(kb, page.id)).parentPageId).toBeNull()
    expectError(await movePage(kb, folder.body.page.id, { parentPageId: folder.body.page.id }), 400, "invalid_request")
  })

  it("switching the gate off makes writes live at once again", async () => {
    const kb = await newKnowledgebase()
    const page = await livePage(kb, { title: "Gate", bodyMarkdown: "one" })
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["review"] })))
    try {
      const response = await appendPage(kb, page.id, { text: " two" })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ status: "applied", reviewPath: null })
      expect((await readPage(kb, page.id)).markdown).toBe("one two")
    } finally {
      await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["review"] })))
    }
    expect((await appendPage(kb, page.id, { text: " three" })).status).toBe(202)
  })
})
