/**
 * Source uploads when the organization reviews agent writes (the `review` gate): an upload answers
 * 202 `pending_review` with a `reviewPath`, is excluded from every search and is not indexed (no
 * job, no fetch) until a person approves it in the review inbox (here: `ReviewService` through the
 * admin handle, as `svc review approve|reject` does). Approval starts indexing (the server's worker
 * finds the job by polling, as it would after a CLI approval: the test moves the worker's clock to
 * its next poll); rejection deletes the source.
 */
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReviewService } from "../../server/knowledge/review/service.js"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, insertKnowledgebases, organizationId, personalKey, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { makeWorkerClock, type WorkerClock } from "../support/worker-clock.js"
import { expectNoSourceRows, jobOf, sourceTableCounts } from "../support/source-rows.js"
import { accepted, documentHits, expectNothingWritten, fixtureSize, getSource, listSources, readSource, uploadFixture, uploadForm, uploadJson, waitForSource } from "../support/sources.js"
import { type WebServer, startWebServer } from "../support/web-server.js"
import { uuidPattern } from "../support/patterns.js"

let server: TestServer
let orgId: string
let web: WebServer
let worker: WorkerClock
beforeAll(async () => {
  worker = await makeWorkerClock()
  web = await startWebServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
    res.end("The pangolin page, fetched only after approval.\n")
  })
  server = await startTestServer({
    server: {
      requestsPerMinute: 1_000_000,
      // Approvals made outside the server (the CLI, the admin handle) are found by polling.
      ingestion: { clock: worker.clock, isPublic: (ip: string) => ip === "127.0.0.1" }
    }
  })
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["review"] })))
  orgId = await organizationId(server)
})
afterAll(async () => {
  await server.stop()
  await web.close()
  await worker.close()
})

const now = () => new Date(server.clock.now()).toISOString()
const newKnowledgebase = async (org = "default"): Promise<string> =>
  (await insertKnowledgebases(server, { org, count: 1, prefix: "Reviewed sources" }))[0]!.id
const knowledgebase = async (kb: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}`)
  expect(response.status).toBe(200)
  return response.body.knowledgebase
}
const changes = async (kb: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`)
  expect(response.status).toBe(200)
  return response.body.changes as Array<any>
}

/** Lets the worker's next poll happen (every second on its clock) and waits until it is idle again. */
const pollOnce = async () => {
  await worker.advance(1_000)
  await worker.idle()
}
/** Approves as `svc review approve` does, then lets the worker poll (and run the job it finds). */
const approve = async (id: string, org = orgId) => {
  const result = await server.admin(Effect.either(Effect.flatMap(ReviewService, (r) => r.approve(org, id))))
  await pollOnce()
  return result
}
const reject = (id: string, org = orgId) => server.admin(Effect.either(Effect.flatMap(ReviewService, (r) => r.reject(org, id))))
const inbox = (org = orgId) => server.admin(Effect.flatMap(ReviewService, (r) => r.list(org)))

const succeeded = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) throw new Error(`expected success, got ${JSON.stringify(result.left)}`)
  return result.right
}
const failedWith = <A, E>(result: Either.Either<A, E>, tag: string) => {
  expect(Either.isLeft(result)).toBe(true)
  const error = (result as Either.Left<E, A>).left as E & { _tag: string; message: string }
  expect(error._tag).toBe(tag)
  return error
}

let counter = 0
const uniqueText = (words: string) => `${words}\n\nReviewed upload ${++counter} at ${Date.now()}.`

/** The source's list entries and the Knowledgebase's count agree. */
const expectCounted = async (kb: string) => {
  const listed = await listSources(server, kb)
  expect((await knowledgebase(kb)).counts.sources).toBe(listed.length)
  return listed
}

describe("uploads under review", () => {
  it("JSON → 202 pending_review with reviewPath; not indexed, not searchable, no job, until approved", async () => {
    const kb = await newKnowledgebase()
    const at = now()
    const content = uniqueText("# Axolotl care\n\nKeep the axolotl tank cool.")
    const response = await uploadJson(server, kb, { name: "Axolotl care", contentMarkdown: content })
    expect(response.status).toBe(202)
    expect(response.body).toEqual({
      status: "pending_review",
      source: {
        id: expect.stringMatching(uuidPattern),
        name: "Axolotl care",
        type: "md",
        status: "pending_review",
        searchable: false,
        disabled: false,
        url: null,
        updatedAt: at,
        createdAt: at,
        sizeBytes: Buffer.byteLength(content),
        errorMessage: null,
        createdVia: "api",
        parentPageId: null
      },
      reviewPath: expect.stringContaining(response.body.source.id),
      deduplicated: false
    })
    const id = response.body.source.id as string

    await pollOnce()
    expect(await readSource(server, kb, id)).toEqual(response.body.source)
    expect(await jobOf(server, id)).toBeNull()
    expect(await documentHits(server, kb, "axolotl")).toEqual([])
    const all = await server.request("POST", "/knowledgebases/all/search", { body: { query: "axolotl" } })
    expect(all.body.results).toEqual([])
    expect(await expectCounted(kb)).toEqual([response.body.source])
    expect(await inbox()).toContainEqual(
      expect.objectContaining({ id, kind: "source_upload", sourceId: id, knowledgebaseId: kb, title: "Axolotl care" })
    )
  })

  it("approval starts indexing: processing, then ready and searchable; it leaves the inbox", async () => {
    const kb = await newKnowledgebase()
    const source = accepted(await uploadJson(server, kb, { name: "Okapi", contentText: uniqueText("The okapi enclosure opens at nine.") }), "pending_review")
    const approved = succeeded(await approve(source.id))
    expect(approved).toMatchObject({ id: source.id, kind: "source", status: "processing", source: { id: source.id, status: "processing" } })
    const ready = await waitForSource(server, kb, source.id, { timeoutMs: 10_000 })
    expect(ready).toMatchObject({ status: "ready", searchable: true, errorMessage: null })
    expect((await documentHits(server, kb, "okapi")).map((hit) => hit.citation.sourceId)).toEqual([source.id])
    expect((await changes(kb)).map((entry) => [entry.id, entry.type, entry.change])).toEqual([
      [source.id, "source", "created"],
      [source.id, "source", "updated"],
      [source.id, "source", "ready"]
    ])
    expect((await inbox()).map((item) => item.id)).not.toContain(source.id)
    expect(await jobOf(server, source.id)).toBeNull()
  })

  it("rejection deletes the source: 404 on read, gone from the list and the count, `deleted` in the feed", async () => {
    const kb = await newKnowledgebase()
    const before = await sourceTableCounts(server)
    const source = accepted(await uploadJson(server, kb, { name: "Rejected", contentText: uniqueText("The tapir memo.") }), "pending_review")
    expect((await knowledgebase(kb)).counts.sources).toBe(1)
    const rejected = succeeded(await reject(source.id))
    expect(rejected).toMatchObject({ id: source.id, kind: "source", status: "deleted" })
    expectError(await getSource(server, kb, source.id), 404, "not_found")
    expect(await expectCounted(kb)).toEqual([])
    expect((await changes(kb)).map((entry) => [entry.id, entry.type, entry.change])).toEqual([
      [source.id, "source", "created"],
      [source.id, "source", "deleted"]
    ])
    expect(await documentHits(server, kb, "tapir")).toEqual([])
    const after = await sourceTableCounts(server)
    expect({ ...after, changes: 0 }).toEqual({ ...before, changes: 0 })
    expect((await inbox()).map((item) => item.id)).not.toContain(source.id)
  })

  it("multipart uploads wait too; an approved PDF is indexed with its pages", async () => {
    const kb = await newKnowledgebase()
    const response = await uploadFixture(server, kb, "handbook.pdf", { name: `Handbook ${++counter}` })
    const source = accepted(response, "pending_review")
    expect(source).toMatchObject({ type: "pdf", sizeBytes: fixtureSize("handbook.pdf"), status: "pending_review" })
    expect(response.body.reviewPath).toEqual(expect.stringContaining(source.id))
    expect(await documentHits(server, kb, "mileage")).toEqual([])
    succeeded(await approve(source.id))
    expect(await waitForSource(server, kb, source.id, { timeoutMs: 10_000 })).toMatchObject({ status: "ready" })
    const hits = await documentHits(server, kb, "mileage")
    expect(hits.map((hit) => hit.citation.sourceId)).toEqual([source.id])
    expect(hits[0].citation.section).toMatch(/^page \d+$/)
  })

  it("an approved document that cannot be read → failed with its errorMessage", async () => {
    const kb = await newKnowledgebase()
    const source = accepted(await uploadFixture(server, kb, "scanned.pdf", { name: `Scan ${++counter}` }), "pending_review")
    succeeded(await approve(source.id))
    const failed = await waitForSource(server, kb, source.id, { timeoutMs: 10_000 })
    expect(failed.status).toBe("failed")
    expect(failed.errorMessage).toMatch(/no extractable text/i)
  })

  it("a url source is not fetched while it waits; approval fetches it", async () => {
    const kb = await newKnowledgebase()
    const url = `${web.origin}/pangolin.txt?n=${++counter}`
    const source = accepted(await uploadJson(server, kb, { name: "Pangolin", url }), "pending_review")
    expect(source.url).toBe(url)
    await pollOnce()
    expect(web.requests).toEqual([])
    succeeded(await approve(source.id))
    expect(await waitForSource(server, kb, source.id, { timeoutMs: 10_000 })).toMatchObject({ status: "ready", type: "txt" })
    expect(web.requests).toHaveLength(1)
    expect((await documentHits(server, kb, "pangolin")).map((hit) => hit.citation.sourceId)).toEqual([source.id])
  })

  it("a refused url is refused up front under review too (400), nothing proposed", async () => {
    const kb = await newKnowledgebase()
    const waiting = (await inbox()).length
    await expectNothingWritten(server, kb, () =>
      expectNoSourceRows(server, async () => {
        expectError(await uploadJson(server, kb, { name: "Metadata", url: "http://169.254.169.254/latest/meta-data" }), 400, "invalid_request")
      })
    )
    expect(await inbox()).toHaveLength(waiting)
  })

  it("under review the same bytes are never attached to an existing document: each upload waits on its own", async () => {
    const a = await newKnowledgebase()
    const b = await newKnowledgebase()
    const content = uniqueText("Identical bytes under review.")
    const first = accepted(await uploadJson(server, a, { name: "First copy", contentText: content }), "pending_review")
    const second = accepted(await uploadJson(server, a, { name: "Second copy", contentText: content }), "pending_review")
    const third = accepted(await uploadJson(server, b, { name: "Third copy", contentText: content }), "pending_review")
    expect(new Set([first.id, second.id, third.id]).size).toBe(3)
    expect(await expectCounted(a)).toHaveLength(2)
    succeeded(await approve(first.id))
    await waitForSource(server, a, first.id, { timeoutMs: 10_000 })
    const fourth = accepted(await uploadJson(server, b, { name: "Fourth copy", contentText: content }), "pending_review")
    expect(fourth.id).not.toBe(first.id)
  })

  it("a personal key's upload is recorded against the member in the inbox", async () => {
    const kb = await newKnowledgebase()
    const key = await personalKey(server, { email: "writer@review.test", role: "member" })
    const source = accepted(await uploadJson(server, kb, { name: "By a member", contentText: uniqueText("member upload") }, { key }), "pending_review")
    expect(await inbox()).toContainEqual(expect.objectContaining({ id: source.id, author: "writer@review.test" }))
  })

  it("an Idempotency-Key replay returns the same 202 pending_review and proposes once", async () => {
    const kb = await newKnowledgebase()
    const headers = { "idempotency-key": `review-${kb}` }
    const body = { name: "Once", contentText: uniqueText("proposed once") }
    const first = await uploadJson(server, kb, body, { headers })
    expect(first.body.status).toBe("pending_review")
    const second = await uploadJson(server, kb, body, { headers })
    expect(second.status).toBe(202)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect((await inbox()).filter((item) => item.knowledgebaseId === kb)).toHaveLength(1)
    expect(await expectCounted(kb)).toHaveLength(1)
  })

  it("refused uploads propose nothing (validation, unknown folder, size, unsupported file)", async () => {
    const kb = await newKnowledgebase()
    const waiting = (await inbox()).length
    await expectNothingWritten(server, kb, () =>
      expectNoSourceRows(server, async () => {
        expectError(await uploadJson(server, kb, { name: "", contentText: "x" }), 400, "invalid_request")
        expectError(await uploadJson(server, kb, { name: "x", contentText: "a", contentMarkdown: "b" }), 400, "invalid_request")
        expectError(await uploadJson(server, kb, { name: "x", contentText: uniqueText("x"), parentPageId: unknownId() }), 404, "not_found")
        expectError(await uploadJson(server, kb, { name: "x", contentText: "a".repeat(1_000_001) }), 413, "payload_too_large")
        expectError(await uploadForm(server, kb, [{ field: "file", file: { name: "tool.exe", bytes: new Uint8Array([1, 2]) } }]), 400, "invalid_request")
      })
    )
    expect(await inbox()).toHaveLength(waiting)
  })
})

describe("the review inbox", () => {
  it("an item is approved or rejected once: a second decision is refused, and leaves the source as it is", async () => {
    const kb = await newKnowledgebase()
    const approvedOne = accepted(await uploadJson(server, kb, { name: "Approved", contentText: uniqueText("approved once") }), "pending_review")
    succeeded(await approve(approvedOne.id))
    expect(failedWith(await approve(approvedOne.id), "InvalidRequest").message).toMatch(/no longer waiting/)
    expect(failedWith(await reject(approvedOne.id), "InvalidRequest").message).toMatch(/no longer waiting/)
    expect((await waitForSource(server, kb, approvedOne.id, { timeoutMs: 10_000 })).status).toBe("ready")

    const rejectedOne = accepted(await uploadJson(server, kb, { name: "Rejected", contentText: uniqueText("rejected once") }), "pending_review")
    succeeded(await reject(rejectedOne.id))
    failedWith(await approve(rejectedOne.id), "NotFound")
    failedWith(await reject(rejectedOne.id), "NotFound")
  })

  it("unknown ids, and another organization's uploads, are not found", async () => {
    const kb = await newKnowledgebase()
    const source = accepted(await uploadJson(server, kb, { name: "Mine", contentText: uniqueText("mine") }), "pending_review")
    failedWith(await approve(unknownId()), "NotFound")
    failedWith(await reject(unknownId()), "NotFound")
    await server.admin(Effect.flatMap(AccountsService, (a) => a.createOrganization({ slug: "review-other", plan: "pro" })))
    const otherOrg = await organizationId(server, "review-other")
    failedWith(await approve(source.id, otherOrg), "NotFound")
    failedWith(await reject(source.id, otherOrg), "NotFound")
    expect((await readSource(server, kb, source.id)).status).toBe("pending_review")
    expect(await inbox(otherOrg)).toEqual([])
  })

  it("the inbox lists waiting uploads oldest first, with their Knowledgebase and name", async () => {
    const kb = await newKnowledgebase()
    const first = accepted(await uploadJson(server, kb, { name: "Older", contentText: uniqueText("older") }), "pending_review")
    server.clock.advance(1_000)
    const second = accepted(await uploadJson(server, kb, { name: "Newer", contentText: uniqueText("newer") }), "pending_review")
    const mine = (await inbox()).filter((item) => item.knowledgebaseId === kb)
    expect(mine.map((item) => [item.id, item.title])).toEqual([
      [first.id, "Older"],
      [second.id, "Newer"]
    ])
  })
})

describe("without the review gate", () => {
  it("an organization that does not review uploads answers 202 processing with reviewPath null", async () => {
    await server.admin(Effect.flatMap(AccountsService, (a) => a.createOrganization({ slug: "no-review", plan: "pro" })))
    const key = await server.createKey({ org: "no-review", name: "all", scopes: "all" })
    const kb = (await insertKnowledgebases(server, { org: "no-review", count: 1 }))[0]!.id
    const response = await uploadJson(server, kb, { name: "Direct", contentText: uniqueText("no review here") }, { key })
    expect(response.body).toMatchObject({ status: "processing", reviewPath: null, source: { status: "processing" } })
    expect(await waitForSource(server, kb, response.body.source.id, { key })).toMatchObject({ status: "ready" })
  })
})
