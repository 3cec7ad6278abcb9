/**
 * `GET /knowledgebases/{id}/reviews/{reviewId}`: the `reviewPath` of a write answered 202
 * `pending_review` is a path the server serves. It reads what waits (kind, Knowledgebase, page or
 * source, author, when, the proposed content), read-only and scoped like the Knowledgebase: another
 * Knowledgebase or another organization gets 404.
 */
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReviewService } from "../../server/knowledge/review/service.js"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, organizationId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let orgId: string
let otherKey: string
beforeAll(async () => {
  server = await startTestServer({ server: { requestsPerMinute: 1_000_000 } })
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["review"] })))
  orgId = await organizationId(server)
  otherKey = await server.createOrganization("elsewhere")
})
afterAll(() => server.stop())

const newKnowledgebase = async (name: string, key?: string) => {
  const response = await server.request("POST", "/knowledgebases", { body: { name }, ...(key === undefined ? {} : { key }) })
  expect(response.status).toBe(201)
  return response.body.knowledgebase.id as string
}
/** Follows a `reviewPath` (relative to the base URL). */
const follow = (reviewPath: string, key?: string) => server.request("GET", reviewPath, key === undefined ? {} : { key })
const approve = (id: string) => server.admin(Effect.either(Effect.flatMap(ReviewService, (r) => r.approve(orgId, id))))

describe("a reviewPath is readable", () => {
  it("an upload under review: follow reviewPath from the 202 and read the pending item", async () => {
    const kb = await newKnowledgebase("Reviewed uploads")
    const text = `# Expenses\n\nAttach the receipt (${Math.random()}).`
    const uploaded = await server.request("POST", `/knowledgebases/${kb}/sources`, { body: { name: "Expenses", contentMarkdown: text } })
    expect(uploaded.status).toBe(202)
    expect(uploaded.body.status).toBe("pending_review")
    const source = uploaded.body.source
    expect(uploaded.body.reviewPath).toBe(`/knowledgebases/${kb}/reviews/${source.id}`)

    const read = await follow(uploaded.body.reviewPath)
    expect({ status: read.status, body: read.body }).toEqual({
      status: 200,
      body: {
        review: {
          id: source.id,
          kind: "source_upload",
          status: "pending_review",
          knowledgebaseId: kb,
          pageId: null,
          sourceId: source.id,
          author: expect.stringContaining("key"),
          createdAt: source.createdAt,
          reviewedAt: null,
          proposed: { title: "Expenses", description: null, preview: text, sizeBytes: Buffer.byteLength(text), type: "md", url: null }
        }
      }
    })
    // The same id as `svc review` takes.
    const inbox = await server.admin(Effect.flatMap(ReviewService, (r) => r.list(orgId)))
    expect(inbox.map((item) => item.id)).toContain(read.body.review.id)
  })

  it("a page write under review: follow reviewPath, read it waiting, then applied once approved", async () => {
    const kb = await newKnowledgebase("Reviewed pages")
    const created = await server.request("POST", `/knowledgebases/${kb}/pages`, {
      body: { title: "Refunds", description: "How refunds work", bodyMarkdown: "Refunds within 30 days." }
    })
    expect(created.status).toBe(202)
    const { revisionId, reviewPath, page } = created.body
    expect(reviewPath).toBe(`/knowledgebases/${kb}/reviews/${revisionId}`)

    const waiting = await follow(reviewPath)
    expect(waiting.status).toBe(200)
    expect(waiting.body.review).toEqual({
      id: revisionId,
      kind: "page_create",
      status: "pending_review",
      knowledgebaseId: kb,
      pageId: page.id,
      sourceId: null,
      author: expect.any(String),
      createdAt: expect.any(String),
      reviewedAt: null,
      proposed: { title: "Refunds", description: "How refunds work", preview: "Refunds within 30 days.", sizeBytes: 23, type: null, url: null }
    })

    expect(Either.isRight(await approve(revisionId))).toBe(true)
    const settled = await follow(reviewPath)
    expect(settled.status).toBe(200)
    expect(settled.body.review).toMatchObject({ id: revisionId, status: "applied", reviewedAt: expect.any(String) })

    // An edit under review reads as page_edit with the proposed body.
    const edited = await server.request("PATCH", `/knowledgebases/${kb}/pages/${page.id}`, {
      body: { patch: [{ op: "append", text: "\n\nAsk for the receipt." }] }
    })
    expect(edited.status).toBe(202)
    const edit = await follow(edited.body.reviewPath)
    expect(edit.body.review).toMatchObject({
      kind: "page_edit",
      status: "pending_review",
      pageId: page.id,
      proposed: { preview: "Refunds within 30 days.\n\nAsk for the receipt." }
    })
  })

  it("another organization, another Knowledgebase, an unknown id and a direct write are 404", async () => {
    const kb = await newKnowledgebase("Scoped")
    const created = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Private", bodyMarkdown: "Only ours." } })
    expect(created.status).toBe(202)
    const reviewPath: string = created.body.reviewPath
    expect((await follow(reviewPath)).status).toBe(200)

    expectError(await follow(reviewPath, otherKey), 404, "not_found")
    const theirs = await newKnowledgebase("Theirs", otherKey)
    expectError(await follow(`/knowledgebases/${theirs}/reviews/${created.body.revisionId}`, otherKey), 404, "not_found")
    const sibling = await newKnowledgebase("Sibling")
    expectError(await follow(`/knowledgebases/${sibling}/reviews/${created.body.revisionId}`), 404, "not_found")
    expectError(await follow(`/knowledgebases/${kb}/reviews/00000000-0000-4000-8000-000000000000`), 404, "not_found")

    // A folder is never reviewed: its revision is no review item.
    const folder = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Folder", templateKey: "folder" } })
    expect(folder.status).toBe(201)
    expect(folder.body.reviewPath).toBeNull()
    expectError(await follow(`/knowledgebases/${kb}/reviews/${folder.body.revisionId}`), 404, "not_found")
  })
})
