/**
 * `POST /knowledgebases/{id|all}/search` over HTTP: BM25 ranking with bold snippets and a citation
 * on every hit (documents, pages, memories); the scope (one Knowledgebase, `all`, never another
 * organization); only ready, enabled sources; validation; cursor paging; hostile FTS syntax;
 * credits (one per call that searches documents, pages free, 402 with nothing charged); memories
 * only for personal keys, and in their export.
 *
 * FTS5's BM25 weighs words against the whole index, so every test uses invented words of its own
 * (`word()`), which makes rankings independent of what other tests indexed.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { MemoryService } from "../../server/knowledge/memories/service.js"
import { ReviewService } from "../../server/knowledge/review/service.js"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, insertKnowledgebases, organizationId, personalKey, unknownId } from "../support/fixtures.js"
import { uuidPattern } from "../support/patterns.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createFolder, createPage, organizationOf, setCredits } from "../support/knowledge.js"
import { readySource, uploadFile, uploadSource, waitForSource } from "../support/sources.js"
import { readZipBuffer } from "../support/zip.js"
import { onSqlite } from "../support/postgres.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

let server: TestServer
let orgId: string
beforeAll(async () => {
  server = await startTestServer()
  orgId = await organizationId(server)
})
afterAll(() => server.stop())
// Each test starts with a fresh rate-limit window (120 requests per minute per key).
beforeEach(() => server.clock.advance(60_000))


let wordCounter = 0
/** An invented word no other test (or the English stemmer) knows. */
const word = (stem = "zq") => {
  wordCounter++
  const letters = wordCounter
    .toString(26)
    .split("")
    .map((d) => String.fromCharCode(97 + parseInt(d, 26)))
    .join("")
  return `${stem}x${letters}vk`
}

const newKnowledgebase = async (org = "default", name = "Search"): Promise<string> =>
  (await insertKnowledgebases(server, { org, count: 1, prefix: name }))[0]!.id

type Body = Record<string, unknown>
const search = (kb: string, body: unknown, key?: string) =>
  server.request("POST", `/knowledgebases/${kb}/search`, { body, ...(key === undefined ? {} : { key }) })
/** A search that must succeed; returns its body. */
const found = async (kb: string, body: Body, key?: string) => {
  const response = await search(kb, body, key)
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
  return response.body as { results: Array<any>; nextCursor: string | null; kinds: Array<string>; creditsCharged: number }
}
const credits = async () => {
  const org = await organizationOf(server)
  return { remaining: org.creditsRemaining, used: org.creditsUsed }
}
/** Runs a fixture's hand-written SQL (its writes count as writes of every table, `write-declaration.ts`). */
const sqlRun = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.admin(writing(writesEveryTable)(Effect.flatMap(SqlClient.SqlClient, run)))

describe("results", () => {
  it("answers {results, nextCursor, kinds, creditsCharged}; a document hit cites its source and passage", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const source = await readySource(server, kb, { name: "Refund policy", text: `Customers may ask for a ${w} within thirty days.` })
    const response = await search(kb, { query: w })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(response.headers.get("x-request-id")).toMatch(/^req_/)
    expect(response.body).toEqual({
      results: [
        {
          kind: "document",
          id: expect.any(String),
          title: "Refund policy",
          snippet: `Customers may ask for a **${w}** within thirty days.`,
          score: expect.any(Number),
          citation: {
            kind: "document",
            knowledgebaseId: kb,
            sourceId: source.id,
            sourceName: "Refund policy",
            passageId: expect.any(String),
            section: null
          }
        }
      ],
      nextCursor: null,
      kinds: ["documents", "pages"],
      creditsCharged: 1,
      retrieval: "lexical"
    })
    const hit = response.body.results[0]
    expect(hit.citation.passageId).toBe(hit.id)
    // BM25 relevance, higher is better (FTS5 clamps a word's weight near zero in a tiny index).
    expect(hit.score).toBeGreaterThanOrEqual(0)
  })

  it("a page hit carries its page id in the citation; folders never match", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const folder = await createFolder(server, kb, `${w} folder`)
    const page = await createPage(server, kb, { title: `About ${w}`, bodyMarkdown: `The ${w} is described here.`, parentPageId: folder })
    const body = await found(kb, { query: w, kinds: ["pages"] })
    expect(body).toEqual({
      results: [
        {
          kind: "page",
          id: page,
          title: `About ${w}`,
          snippet: `The **${w}** is described here.`,
          score: expect.any(Number),
          citation: { kind: "page", knowledgebaseId: kb, pageId: page, title: `About ${w}` }
        }
      ],
      nextCursor: null,
      kinds: ["pages"],
      creditsCharged: 0,
      retrieval: "lexical"
    })
    // A folder whose description holds the word does not match either.
    const other = word()
    const described = await server.request("POST", `/knowledgebases/${kb}/pages`, {
      body: { title: "Described", templateKey: "folder", description: `all about ${other}` }
    })
    expect(described.status).toBe(201)
    expect((await found(kb, { query: `${w} ${other}`, kinds: ["pages"] })).results.map((r: any) => r.id)).toEqual([page])
  })

  it("a page matches on its title alone; its snippet then falls back to the title when the body is empty", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const page = await createPage(server, kb, { title: `Only ${w} in the title` })
    const [hit] = (await found(kb, { query: w, kinds: ["pages"] })).results
    expect(hit).toMatchObject({ kind: "page", id: page, snippet: `Only **${w}** in the title` })
  })

  it("ranks a passage holding more of the query's words first", async () => {
    const kb = await newKnowledgebase()
    const [a, b] = [word(), word()]
    const one = await readySource(server, kb, { name: "One", text: `Alpha text with ${a} only and filler words.` })
    const both = await readySource(server, kb, { name: "Both", text: `Alpha text with ${a} and ${b} filler words.` })
    const other = await readySource(server, kb, { name: "Other", text: `Alpha text with ${b} only and filler words.` })
    const body = await found(kb, { query: `${a} ${b}`, kinds: ["documents"] })
    expect(body.results.map((r) => r.citation.sourceId)[0]).toBe(both.id)
    expect(body.results.map((r) => r.citation.sourceId).sort()).toEqual([one.id, both.id, other.id].sort())
    const scores = body.results.map((r) => r.score)
    // Best first (scores never increase down the list).
    expect(scores).toEqual([...scores].sort((x, y) => y - x))
  })

  it("ranks a passage holding a rarer query word above one holding a common one", async () => {
    const kb = await newKnowledgebase()
    const [rare, common] = [word(), word()]
    for (let i = 0; i < 4; i++) await readySource(server, kb, { name: `Common ${i}`, text: `Some ${common} text number ${i} here.` })
    const rareSource = await readySource(server, kb, { name: "Rare", text: `Some ${rare} text number nine here.` })
    const body = await found(kb, { query: `${common} ${rare}`, kinds: ["documents"] })
    expect(body.results).toHaveLength(5)
    expect(body.results[0].citation.sourceId).toBe(rareSource.id)
    expect(body.results[0].score).toBeGreaterThanOrEqual(body.results[1].score)
  })

  it("merges documents and pages by score, every snippet marking the matched words in bold", async () => {
    const kb = await newKnowledgebase()
    const [a, b, c] = [word(), word(), word()]
    const src = await readySource(server, kb, { name: "Doc", text: `${a} ${b} ${c} in a document.` })
    const page = await createPage(server, kb, { title: "Weak page", bodyMarkdown: `Only ${c} appears in this page body, among many other words of no interest.` })
    const body = await found(kb, { query: `${a} ${b} ${c}` })
    expect(body.results.map((r) => [r.kind, r.kind === "page" ? r.id : r.citation.sourceId])).toEqual([
      ["document", src.id],
      ["page", page]
    ])
    expect(body.results[0].snippet).toBe(`**${a}** **${b}** **${c}** in a document.`)
    expect(body.results[1].snippet).toContain(`**${c}**`)
  })

  it("finds word forms through stemming, with the stem-matched words bold", async () => {
    const kb = await newKnowledgebase()
    await readySource(server, kb, { name: "Forms", text: "The order was refunded after both refunds were approved." })
    const page = await createPage(server, kb, { title: "Stems", bodyMarkdown: "Refunding takes a week." })
    const body = await found(kb, { query: "refund" })
    const doc = body.results.find((r) => r.kind === "document" && r.title === "Forms")
    expect(doc?.snippet).toBe("The order was **refunded** after both **refunds** were approved.")
    expect(body.results.find((r) => r.id === page)?.snippet).toBe("**Refunding** takes a week.")
  })

  it("bolds the matched word when the query's form differs from the text's (policies finds and marks policy)", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    await readySource(server, kb, { name: "Policy", text: `Our ${w} policy is simple and the company keeps it.` })
    const [hit] = (await found(kb, { query: `${w} policies companies`, kinds: ["documents"] })).results
    expect(hit.snippet).toBe(`Our **${w}** **policy** is simple and the **company** keeps it.`)
  })

  it("a page matched only by its title still shows the matched word in bold in its snippet", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const page = await createPage(server, kb, { title: `The ${w} guide`, bodyMarkdown: "Read this carefully before you start." })
    const [hit] = (await found(kb, { query: w, kinds: ["pages"] })).results
    expect(hit.id).toBe(page)
    expect(hit.snippet).toContain(`**${w}**`)
  })

  it("a markdown document cites the section its passage is in", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const src = await readySource(server, kb, {
      name: "Handbook.md",
      markdown: true,
      text: `# Returns\n\nAnything about ${w} goes here.\n`
    })
    const [hit] = (await found(kb, { query: w, kinds: ["documents"] })).results
    expect(hit.citation).toMatchObject({ kind: "document", sourceId: src.id, sourceName: "Handbook.md", knowledgebaseId: kb })
    expect(hit.citation).toHaveProperty("section")
    expect(hit.snippet).toContain(`**${w}**`)
  })

  it("finds nothing for words nobody wrote: an empty result list, still charged", async () => {
    const kb = await newKnowledgebase()
    const body = await found(kb, { query: word() })
    expect(body).toEqual({ results: [], nextCursor: null, kinds: ["documents", "pages"], creditsCharged: 1, retrieval: "lexical" })
  })
})

describe("scope", () => {
  it("a Knowledgebase id searches only that Knowledgebase's sources and pages", async () => {
    const [kbA, kbB] = [await newKnowledgebase(), await newKnowledgebase()]
    const w = word()
    const srcA = await readySource(server, kbA, { name: "A doc", text: `${w} in A.` })
    const srcB = await readySource(server, kbB, { name: "B doc", text: `${w} in B, a different text.` })
    const pageA = await createPage(server, kbA, { title: "A page", bodyMarkdown: `${w} page in A` })
    const pageB = await createPage(server, kbB, { title: "B page", bodyMarkdown: `${w} page in B` })
    const inA = await found(kbA, { query: w })
    expect(inA.results.map((r) => (r.kind === "page" ? r.id : r.citation.sourceId)).sort()).toEqual([srcA.id, pageA].sort())
    expect(inA.results.every((r) => r.citation.knowledgebaseId === kbA)).toBe(true)
    const inB = await found(kbB, { query: w })
    expect(inB.results.map((r) => (r.kind === "page" ? r.id : r.citation.sourceId)).sort()).toEqual([srcB.id, pageB].sort())
  })

  it("`all` spans every Knowledgebase of the organization, and never another organization's", async () => {
    const [kbA, kbB] = [await newKnowledgebase(), await newKnowledgebase()]
    const w = word()
    const srcA = await readySource(server, kbA, { name: "A doc", text: `${w} in A.` })
    const pageB = await createPage(server, kbB, { title: "B page", bodyMarkdown: `${w} page in B` })

    const otherKey = await server.createOrganization(`search-other-${wordCounter}`)
    const otherKb = (await server.request("POST", "/knowledgebases", { body: { name: "Theirs" }, key: otherKey })).body.knowledgebase.id
    const otherSrc = await readySource(server, otherKb, { name: "Their doc", text: `${w} in theirs.`, key: otherKey })
    const otherPage = await createPage(server, otherKb, { title: "Their page", bodyMarkdown: `${w} theirs` }, otherKey)

    const ours = await found("all", { query: w })
    expect(ours.results.map((r) => (r.kind === "page" ? r.id : r.citation.sourceId)).sort()).toEqual([srcA.id, pageB].sort())
    expect(ours.results.find((r) => r.kind === "document")!.citation.knowledgebaseId).toBe(kbA)
    expect(ours.results.find((r) => r.kind === "page")!.citation.knowledgebaseId).toBe(kbB)

    const theirs = await found("all", { query: w }, otherKey)
    expect(theirs.results.map((r) => (r.kind === "page" ? r.id : r.citation.sourceId)).sort()).toEqual([otherSrc.id, otherPage].sort())
  })

  it("is 404 not_found for an unknown Knowledgebase or another organization's, and charges nothing", async () => {
    const otherKey = await server.createOrganization(`search-404-${wordCounter++}`)
    const theirs = (await server.request("POST", "/knowledgebases", { body: { name: "Theirs" }, key: otherKey })).body.knowledgebase.id
    const before = await credits()
    expectError(await search(unknownId(), { query: "refund" }), 404, "not_found")
    expectError(await search(theirs, { query: "refund" }), 404, "not_found")
    expectError(await search("not-a-uuid", { query: "refund" }), 404, "not_found")
    expect(await credits()).toEqual(before)
  })
})

describe("only ready, enabled sources are searched", () => {
  it("an upload waiting for review never shows; once approved and indexed it does", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["review"] })))
    let pending: Awaited<ReturnType<typeof uploadSource>>
    try {
      pending = await uploadSource(server, kb, { name: "Pending", text: `A ${w} waiting for a person.` })
    } finally {
      await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["review"] })))
    }
    expect(pending.status).toBe("pending_review")
    expect(pending.source.status).toBe("pending_review")
    expect((await found(kb, { query: w })).results).toEqual([])
    expect((await found("all", { query: w })).results).toEqual([])

    await server.admin(Effect.flatMap(ReviewService, (review) => review.approve(orgId, pending.source.id)))
    const ready = await waitForSource(server, kb, pending.source.id)
    expect(ready.status).toBe("ready")
    expect(ready.searchable).toBe(true)
    const body = await found(kb, { query: w })
    expect(body.results.map((r) => r.citation.sourceId)).toEqual([pending.source.id])
  })

  it("a failed upload never shows", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const response = await uploadFile(server, kb, { filename: `${w}.pdf`, bytes: `%PDF-1.4 not really a PDF about ${w}`, contentType: "application/pdf" })
    expect(response.status).toBe(202)
    const failed = await waitForSource(server, kb, response.body.source.id)
    expect(failed.status).toBe("failed")
    expect(failed.searchable).toBe(false)
    expect(failed.errorMessage).toEqual(expect.any(String))
    expect((await found(kb, { query: w })).results).toEqual([])
  })

  it("a source that is not ready (processing, failed, pending_review) or is disabled is left out, though its passages exist", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const src = await readySource(server, kb, { name: "Flips", text: `The ${w} passage.` })
    const keep = await readySource(server, kb, { name: "Stays", text: `Another ${w} passage, longer than the first one.` })
    const hitsNow = async () => (await found(kb, { query: w, kinds: ["documents"] })).results.map((r) => r.citation.sourceId).sort()
    expect(await hitsNow()).toEqual([src.id, keep.id].sort())
    for (const status of ["processing", "failed", "pending_review"]) {
      await sqlRun((sql) => sql`UPDATE sources SET status = ${status} WHERE id = ${src.id}`)
      expect(await hitsNow(), status).toEqual([keep.id])
      expect((await found("all", { query: w, kinds: ["documents"] })).results.map((r) => r.citation.sourceId), status).toEqual([keep.id])
    }
    await sqlRun((sql) => sql`UPDATE sources SET status = 'ready', disabled = 1 WHERE id = ${src.id}`)
    expect(await hitsNow()).toEqual([keep.id])
    await sqlRun((sql) => sql`UPDATE sources SET disabled = 0 WHERE id = ${src.id}`)
    expect(await hitsNow()).toEqual([src.id, keep.id].sort())
  })

  it("a page waiting for review is not found; the live page is", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["review"] })))
    try {
      const response = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Draft", bodyMarkdown: `${w} draft` } })
      expect(response.status).toBe(202)
    } finally {
      await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["review"] })))
    }
    expect((await found(kb, { query: w, kinds: ["pages"] })).results).toEqual([])
  })
})

describe("validation", () => {
  const refusals: Array<[string, unknown]> = [
    ["a query of only punctuation", { query: "?!.,;:" }],
    ["a query of only FTS operators' symbols", { query: '"*" ()' }],
    ["an empty query", { query: "" }],
    ["a blank query", { query: "   " }],
    ["no query", { kinds: ["pages"] }],
    ["a query that is not a string", { query: 42 }],
    ["a query over 1000 characters", { query: "a".repeat(1001) }],
    ["an unknown body property", { query: "refund", sort: "score" }],
    ["an unknown kind", { query: "refund", kinds: ["videos"] }],
    ["empty kinds", { query: "refund", kinds: [] }],
    ["kinds not an array", { query: "refund", kinds: "pages" }],
    ["limit 0", { query: "refund", limit: 0 }],
    ["limit 201", { query: "refund", limit: 201 }],
    ["a fractional limit", { query: "refund", limit: 1.5 }],
    ["a limit given as a string", { query: "refund", limit: "10" }],
    ["a malformed cursor", { query: "refund", cursor: "not-a-cursor" }],
    ["a body that is not an object", ["refund"]]
  ]
  it.each(refusals)("refuses %s with 400 invalid_request and charges nothing", async (_name, body) => {
    const kb = await newKnowledgebase()
    const before = await credits()
    expectError(await search(kb, body), 400, "invalid_request")
    expectError(await search("all", body), 400, "invalid_request")
    expect(await credits()).toEqual(before)
  })

  it("refuses malformed JSON with 400 invalid_request", async () => {
    const kb = await newKnowledgebase()
    expectError(await search(kb, "{not json"), 400, "invalid_request")
  })

  it("names the unknown property", async () => {
    const kb = await newKnowledgebase()
    const message = expectError(await search(kb, { query: "refund", sortOrder: "x" }), 400, "invalid_request")
    expect(message).toContain("sortOrder")
  })

  it("accepts limit 1 and limit 200", async () => {
    const kb = await newKnowledgebase()
    expect((await search(kb, { query: "refund", limit: 1 })).status).toBe(200)
    expect((await search(kb, { query: "refund", limit: 200 })).status).toBe(200)
  })

  it("quoted FTS syntax and operator words in a query never error", async () => {
    const kb = await newKnowledgebase()
    await createPage(server, kb, { title: "Operators", bodyMarkdown: "Rules AND exceptions OR not near a b star." })
    const queries = [
      '"a" NEAR b*',
      "AND OR",
      "NOT",
      "refund AND",
      "title:refund",
      "markdown:rules",
      "NEAR(a b, 2)",
      '"unterminated',
      "a -b",
      "{title}: rules",
      "^rules",
      "rules*",
      "'; DROP TABLE pages; --",
      "(rules OR",
      "rules + exceptions",
      "\u0000 rules"
    ]
    for (const query of queries) {
      const response = await search(kb, { query, kinds: ["pages"] })
      expect({ query, status: response.status }).toEqual({ query, status: 200 })
      expect(response.body.results).toEqual(expect.any(Array))
    }
    // Operator words are plain words: this page holds "and", "or", "near".
    expect((await found(kb, { query: "AND OR", kinds: ["pages"] })).results).toHaveLength(1)
    expect((await found(kb, { query: '"a" NEAR b*', kinds: ["pages"] })).results).toHaveLength(1)
  })
})

describe("paging", () => {
  it("pages through results with limit and nextCursor: every hit once, in the one-page order", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    for (let i = 0; i < 7; i++) await createPage(server, kb, { title: `P${i}`, bodyMarkdown: `${`${w} `.repeat(i + 1)}tail ${i}` })
    const whole = await found(kb, { query: w, kinds: ["pages"], limit: 200 })
    expect(whole.results).toHaveLength(7)
    expect(whole.nextCursor).toBeNull()

    const seen: Array<string> = []
    let cursor: string | null = null
    let calls = 0
    do {
      const body: Awaited<ReturnType<typeof found>> = await found(kb, { query: w, kinds: ["pages"], limit: 3, ...(cursor === null ? {} : { cursor }) })
      expect(body.results.length).toBeLessThanOrEqual(3)
      expect(body.creditsCharged).toBe(0)
      seen.push(...body.results.map((r) => r.id))
      cursor = body.nextCursor
      calls++
    } while (cursor !== null)
    expect(calls).toBe(3)
    expect(seen).toEqual(whole.results.map((r) => r.id))
    expect(new Set(seen).size).toBe(7)
  })

  it("answers 50 results by default", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    for (let i = 0; i < 52; i++) await createPage(server, kb, { title: `Many ${i}`, bodyMarkdown: `${w} number ${i}` })
    const first = await found(kb, { query: w, kinds: ["pages"] })
    expect(first.results).toHaveLength(50)
    expect(first.nextCursor).toEqual(expect.any(String))
    const rest = await found(kb, { query: w, kinds: ["pages"], cursor: first.nextCursor })
    expect(rest.results).toHaveLength(2)
    expect(rest.nextCursor).toBeNull()
  })

  it("pages through hits of equal score without repeating or skipping any, whatever the ids' order", async () => {
    // Pages with identical text score exactly the same. Their ids are chosen so that id order runs
    // with (first Knowledgebase) and against (second) the order they were stored in.
    const w = word()
    const stamp = "2026-11-01T00:00:00.000Z"
    for (const direction of ["ascending", "descending"] as const) {
      const kb = await newKnowledgebase()
      const ids = Array.from({ length: 6 }, (_, i) => {
        const n = direction === "ascending" ? i + 1 : 6 - i
        return `00000000-0000-4000-8000-${String(n).padStart(6, "0")}${kb.slice(-6)}`
      })
      for (const id of ids) {
        const row = {
          id,
          organization_id: orgId,
          knowledgebase_id: kb,
          parent_page_id: null,
          title: "Same title",
          description: "",
          template_key: "page",
          markdown: `Same ${w} body.`,
          hook: "",
          revision: 1,
          author: null,
          created_at: stamp,
          updated_at: stamp
        }
        await sqlRun((sql) => sql`INSERT INTO pages ${sql.insert(row)}`)
      }
      const whole = await found(kb, { query: w, kinds: ["pages"], limit: 200 })
      expect(whole.results.map((r) => r.id).sort()).toEqual([...ids].sort())
      for (const limit of [1, 2, 4]) {
        const seen: Array<string> = []
        let cursor: string | null = null
        do {
          const body: Awaited<ReturnType<typeof found>> = await found(kb, { query: w, kinds: ["pages"], limit, ...(cursor === null ? {} : { cursor }) })
          seen.push(...body.results.map((r) => r.id))
          cursor = body.nextCursor
        } while (cursor !== null)
        expect({ direction, limit, seen }).toEqual({ direction, limit, seen: whole.results.map((r) => r.id) })
      }
    }
  })

  it("a full last page has nextCursor null", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    for (let i = 0; i < 4; i++) await createPage(server, kb, { title: `P${i}`, bodyMarkdown: `${w} ${i}` })
    const first = await found(kb, { query: w, kinds: ["pages"], limit: 2 })
    expect(first.nextCursor).toEqual(expect.any(String))
    const second = await found(kb, { query: w, kinds: ["pages"], limit: 2, cursor: first.nextCursor })
    expect(second.results).toHaveLength(2)
    expect(second.nextCursor).toBeNull()
  })

  it("pages documents too, one credit per call", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    for (let i = 0; i < 3; i++) await readySource(server, kb, { name: `D${i}`, text: `${w} document number ${i}` })
    const before = await credits()
    const first = await found(kb, { query: w, kinds: ["documents"], limit: 2 })
    const second = await found(kb, { query: w, kinds: ["documents"], limit: 2, cursor: first.nextCursor })
    expect([first.results.length, second.results.length, second.nextCursor]).toEqual([2, 1, null])
    expect([first.creditsCharged, second.creditsCharged]).toEqual([1, 1])
    expect(await credits()).toEqual({ remaining: before.remaining - 2, used: before.used + 2 })
  })

  it("refuses a cursor of another query, other kinds, another Knowledgebase or another key with 400, charging nothing", async () => {
    const [kb, kb2] = [await newKnowledgebase(), await newKnowledgebase()]
    const w = word()
    for (let i = 0; i < 3; i++) await createPage(server, kb, { title: `P${i}`, bodyMarkdown: `${w} ${i} other` })
    const first = await found(kb, { query: w, kinds: ["pages"], limit: 1 })
    const cursor = first.nextCursor!
    expect(cursor).toEqual(expect.any(String))
    const before = await credits()
    expectError(await search(kb, { query: `${w} other`, kinds: ["pages"], limit: 1, cursor }), 400, "invalid_request")
    expectError(await search(kb, { query: word(), kinds: ["pages"], limit: 1, cursor }), 400, "invalid_request")
    expectError(await search(kb, { query: w, kinds: ["pages", "documents"], limit: 1, cursor }), 400, "invalid_request")
    expectError(await search(kb2, { query: w, kinds: ["pages"], limit: 1, cursor }), 400, "invalid_request")
    expectError(await search("all", { query: w, kinds: ["pages"], limit: 1, cursor }), 400, "invalid_request")
    const otherKey = await server.createKey({ name: "other reader", scopes: ["knowledge:read"] })
    expectError(await search(kb, { query: w, kinds: ["pages"], limit: 1, cursor }, otherKey), 400, "invalid_request")
    // A tampered cursor is refused too.
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith("AA") ? "BB" : "AA"}`
    expectError(await search(kb, { query: w, kinds: ["pages"], limit: 1, cursor: tampered }), 400, "invalid_request")
    expect(await credits()).toEqual(before)
    // The same query (spelled with other case and spacing) still pages with it.
    expect((await search(kb, { query: `  ${w.toUpperCase()} `, kinds: ["pages"], limit: 1, cursor })).status).toBe(200)
  })
})

describe("credits", () => {
  it("one credit per call that searches documents (the default kinds include documents); pages only are free", async () => {
    const kb = await newKnowledgebase()
    let before = await credits()
    expect((await found(kb, { query: "anything" })).creditsCharged).toBe(1)
    expect(await credits()).toEqual({ remaining: before.remaining - 1, used: before.used + 1 })

    before = await credits()
    const docs = await found(kb, { query: "anything", kinds: ["documents"] })
    expect([docs.creditsCharged, docs.kinds]).toEqual([1, ["documents"]])
    expect(await credits()).toEqual({ remaining: before.remaining - 1, used: before.used + 1 })

    before = await credits()
    const both = await found("all", { query: "anything", kinds: ["pages", "documents", "documents"] })
    expect(both.creditsCharged).toBe(1)
    expect([...both.kinds].sort()).toEqual(["documents", "pages"])
    expect(await credits()).toEqual({ remaining: before.remaining - 1, used: before.used + 1 })

    before = await credits()
    const pages = await found(kb, { query: "anything", kinds: ["pages"] })
    expect([pages.creditsCharged, pages.kinds]).toEqual([0, ["pages"]])
    const pagesTwice = await found("all", { query: "anything", kinds: ["pages", "pages"] })
    expect([pagesTwice.creditsCharged, pagesTwice.kinds]).toEqual([0, ["pages"]])
    expect(await credits()).toEqual(before)
  })

  it("with no credits left a document search is 402 insufficient_credits and charges nothing; pages-only still works", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    const page = await createPage(server, kb, { title: "Free", bodyMarkdown: `${w} is free to find` })
    await readySource(server, kb, { name: "Paid", text: `${w} costs a credit` })
    const saved = (await credits()).remaining
    await setCredits(server, 0)
    try {
      const before = await credits()
      expect(before.remaining).toBe(0)
      expectError(await search(kb, { query: w }), 402, "insufficient_credits")
      expectError(await search(kb, { query: w, kinds: ["documents"] }), 402, "insufficient_credits")
      expectError(await search("all", { query: w, kinds: ["pages", "documents"] }), 402, "insufficient_credits")
      expect(await credits()).toEqual(before)
      const pages = await found(kb, { query: w, kinds: ["pages"] })
      expect(pages.creditsCharged).toBe(0)
      expect(pages.results.map((r) => r.id)).toEqual([page])
      expect(await credits()).toEqual(before)
    } finally {
      await setCredits(server, saved)
    }
  })

  it("the last credit is spent by one search; the next is refused", async () => {
    const kb = await newKnowledgebase()
    const saved = (await credits()).remaining
    await setCredits(server, 1)
    try {
      const used = (await credits()).used
      expect((await found(kb, { query: "last" })).creditsCharged).toBe(1)
      expect(await credits()).toEqual({ remaining: 0, used: used + 1 })
      expectError(await search(kb, { query: "last" }), 402, "insufficient_credits")
      expect(await credits()).toEqual({ remaining: 0, used: used + 1 })
    } finally {
      await setCredits(server, saved)
    }
  })

  it("concurrent searches never spend more credits than there are", async () => {
    const kb = await newKnowledgebase()
    const saved = (await credits()).remaining
    await setCredits(server, 3)
    try {
      const used = (await credits()).used
      const keys = await Promise.all(
        Array.from({ length: 6 }, (_, i) => server.createKey({ name: `racer ${wordCounter}-${i}`, scopes: ["knowledge:read"] }))
      )
      const responses = await Promise.all(keys.map((key) => search(kb, { query: "race" }, key)))
      const statuses = responses.map((r) => r.status).sort()
      expect(statuses.filter((s) => s === 200)).toHaveLength(3)
      expect(statuses.filter((s) => s === 402)).toHaveLength(3)
      expect(await credits()).toEqual({ remaining: 0, used: used + 3 })
    } finally {
      await setCredits(server, saved)
    }
  })

  it("needs knowledge:read", async () => {
    const kb = await newKnowledgebase()
    const agentsOnly = await server.createKey({ name: "agents only", scopes: ["agents:read"] })
    const before = await credits()
    expectError(await search(kb, { query: "refund" }, agentsOnly), 403, "insufficient_scope")
    expectError(await search(kb, { query: "refund" }, null as unknown as string), 401, "unauthorized")
    expect(await credits()).toEqual(before)
  })
})

describe("memories", () => {
  let memberCounter = 0
  /** A member with a personal key (knowledge:read) and their member id. */
  const member = async (role: "viewer" | "member" | "admin" = "viewer") => {
    const email = `memo${++memberCounter}@example.com`
    const key = await personalKey(server, { email, role, scopes: ["knowledge:read"] })
    const record = await server.admin(Effect.flatMap(AccountsService, (a) => a.member("default", email)))
    return { email, key, id: record.id }
  }
  const remember = (memberId: string, text: string) => server.admin(Effect.flatMap(MemoryService, (m) => m.add(orgId, memberId, text)))

  it("a personal key finds its own member's memories, never another member's", async () => {
    const [me, them] = [await member("viewer"), await member("member")]
    const w = word()
    const mine = await remember(me.id, `I prefer the ${w} window seat.`)
    const theirs = await remember(them.id, `Their ${w} note, private to them.`)
    const kb = await newKnowledgebase()

    const body = await found("all", { query: w, kinds: ["memories"] }, me.key)
    expect(body).toEqual({
      results: [
        {
          kind: "memory",
          id: mine.id,
          title: expect.any(String),
          snippet: `I prefer the **${w}** window seat.`,
          score: expect.any(Number),
          citation: { kind: "memory", knowledgebaseId: null, memoryId: mine.id }
        }
      ],
      nextCursor: null,
      kinds: ["memories"],
      creditsCharged: 0,
      retrieval: "lexical"
    })
    // Through one Knowledgebase's search as well.
    expect((await found(kb, { query: w, kinds: ["memories"] }, me.key)).results.map((r) => r.id)).toEqual([mine.id])
    expect((await found("all", { query: w, kinds: ["memories"] }, them.key)).results.map((r) => r.id)).toEqual([theirs.id])
    // Mixed kinds: memories come back beside the rest.
    const mixed = await found("all", { query: w, kinds: ["pages", "memories"] }, me.key)
    expect(mixed.results.map((r) => [r.kind, r.id])).toEqual([["memory", mine.id]])
  })

  it("an organization key never gets memory hits, even when it asks for memories", async () => {
    const me = await member()
    const w = word()
    await remember(me.id, `Org keys must not see ${w}.`)
    const asked = await found("all", { query: w, kinds: ["memories"] })
    expect(asked.results).toEqual([])
    expect(asked.creditsCharged).toBe(0)
    const everything = await found("all", { query: w, kinds: ["documents", "pages", "memories"] })
    expect(everything.results).toEqual([])
    const byDefault = await found("all", { query: w })
    expect(byDefault.results).toEqual([])
    expect(byDefault.kinds).not.toContain("memories")
  })

  it("a personal key's default kinds include documents (one credit) and pages", async () => {
    const me = await member()
    const body = await found("all", { query: word() }, me.key)
    expect(body.kinds).toEqual(expect.arrayContaining(["documents", "pages"]))
    expect(body.creditsCharged).toBe(1)
  })

  it("a personal key's export carries memories.json with its own memories only; an organization key's has none", async () => {
    const [me, them] = [await member(), await member()]
    const mine = [await remember(me.id, "First own memory."), await remember(me.id, "Second own memory.")]
    await remember(them.id, "Someone else's memory.")
    const kb = await newKnowledgebase()
    const download = async (key: string) => {
      const response = await fetch(`${server.baseUrl}/knowledgebases/${kb}/export`, { headers: { authorization: `Bearer ${key}` } })
      expect(response.status).toBe(200)
      return readZipBuffer(Buffer.from(await response.arrayBuffer()))
    }
    const personal = await download(me.key)
    const memories = JSON.parse(personal.find((entry) => entry.name === "memories.json")!.data.toString("utf8"))
    // Oldest first (two added within one millisecond come in id order).
    const expected = [...mine].sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? -1 : 1) : x.createdAt < y.createdAt ? -1 : 1))
    expect(memories).toEqual(expected.map((m) => ({ id: m.id, text: m.text, createdAt: m.createdAt, updatedAt: m.updatedAt })))
    const organization = await download(server.key)
    expect(organization.map((entry) => entry.name)).not.toContain("memories.json")
    for (const entry of organization) expect(entry.data.toString("utf8")).not.toContain("own memory")
  })

  it("a removed member's personal key stops working (401 api_key_revoked) and finds nothing", async () => {
    const me = await member()
    await server.admin(Effect.flatMap(AccountsService, (a) => a.removeMember("default", me.email)))
    expectError(await search("all", { query: "anything", kinds: ["memories"] }, me.key), 401, "api_key_revoked")
  })
})

// SQLite only: VACUUM and renumbered rowids are SQLite's (PostgreSQL keys its rows by fts_key alone).
describe.runIf(onSqlite)("full-text keys survive VACUUM and renumbered rowids", () => {
  /**
   * What `VACUUM` may do to a table without an INTEGER PRIMARY KEY: give the remaining rows new
   * rowids, dense and in order (SQLite 3.53 happens to keep them for tables with an index, so the
   * renumbering is also done by hand, without firing any trigger, as VACUUM would not either).
   */
  const renumberRowids = (table: "pages" | "memories") =>
    sqlRun((sql) =>
      Effect.gen(function* () {
        yield* sql.unsafe(`CREATE TEMP TABLE renumbered AS SELECT rowid AS old, row_number() OVER (ORDER BY rowid) AS new FROM ${table}`)
        yield* sql.unsafe(`UPDATE ${table} SET rowid = -rowid`)
        yield* sql.unsafe(`UPDATE ${table} SET rowid = (SELECT new FROM renumbered WHERE old = -${table}.rowid)`)
        yield* sql.unsafe("DROP TABLE renumbered")
      })
    )

  it("after deletes, VACUUM and renumbering, search finds exactly the right pages and memories", async () => {
    const kb = await newKnowledgebase()
    const common = word()
    const pageWords = Array.from({ length: 6 }, () => word())
    const pageIds: Array<string> = []
    for (const [i, w] of pageWords.entries()) pageIds.push(await createPage(server, kb, { title: `Page ${i}`, bodyMarkdown: `${common} and ${w}.` }))
    const email = "vacuum@example.com"
    const key = await personalKey(server, { email, role: "viewer", scopes: ["knowledge:read"] })
    const memberId = (await server.admin(Effect.flatMap(AccountsService, (a) => a.member("default", email)))).id
    const memoryWords = Array.from({ length: 4 }, () => word())
    const memoryIds: Array<string> = []
    for (const w of memoryWords) {
      memoryIds.push((await server.admin(Effect.flatMap(MemoryService, (m) => m.add(orgId, memberId, `${common} memo ${w}`)))).id)
    }

    const gonePages = [pageIds[0]!, pageIds[2]!]
    const goneMemory = memoryIds[0]!
    await sqlRun((sql) => sql`DELETE FROM pages WHERE id IN (${gonePages[0]!}, ${gonePages[1]!})`)
    await sqlRun((sql) => sql`DELETE FROM memories WHERE id = ${goneMemory}`)
    await sqlRun((sql) => sql.unsafe("VACUUM"))
    await renumberRowids("pages")
    await renumberRowids("memories")

    const pageHits = async (query: string) =>
      (await found(kb, { query, kinds: ["pages"], limit: 50 })).results.map((r) => r.citation.pageId as string).sort()
    for (const [i, w] of pageWords.entries()) {
      expect(await pageHits(w)).toEqual(gonePages.includes(pageIds[i]!) ? [] : [pageIds[i]])
    }
    expect(await pageHits(common)).toEqual(pageIds.filter((id) => !gonePages.includes(id)).sort())

    const memoryHits = async (query: string) =>
      (await found("all", { query, kinds: ["memories"], limit: 50 }, key)).results.map((r) => r.citation.memoryId as string).sort()
    for (const [i, w] of memoryWords.entries()) expect(await memoryHits(w)).toEqual(i === 0 ? [] : [memoryIds[i]])
    expect(await memoryHits(common)).toEqual(memoryIds.slice(1).sort())

    const later = word()
    const added = await createPage(server, kb, { title: "After the vacuum", bodyMarkdown: `${common} ${later}` })
    expect(await pageHits(later)).toEqual([added])
    expect(await pageHits(common)).toEqual([...pageIds.filter((id) => !gonePages.includes(id)), added].sort())
    // Both indexes agree with their tables (FTS5 checks every row against its content table).
    expect(await sqlRun((sql) => sql.unsafe("INSERT INTO pages_fts (pages_fts, rank) VALUES ('integrity-check', 1)"))).toBeDefined()
    expect(await sqlRun((sql) => sql.unsafe("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)"))).toBeDefined()
  })
})

describe("the search response is well-formed", () => {
  it("every hit's id is a string, its score a number, its citation of the hit's kind", async () => {
    const kb = await newKnowledgebase()
    const w = word()
    await readySource(server, kb, { name: "Doc", text: `${w} doc` })
    await createPage(server, kb, { title: "Page", bodyMarkdown: `${w} page` })
    const body = await found(kb, { query: w })
    expect(body.results).toHaveLength(2)
    for (const hit of body.results) {
      expect(typeof hit.id).toBe("string")
      expect(typeof hit.score).toBe("number")
      expect(hit.citation.kind).toBe(hit.kind)
      expect(hit.citation.knowledgebaseId).toMatch(uuidPattern)
      expect(hit.snippet).toContain(`**${w}**`)
    }
  })
})
