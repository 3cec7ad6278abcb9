/**
 * Ranking statistics are each organization's own (migration 0017, `server/knowledge/search/
 * statistics.ts`): another organization's uploads and pages leave an organization's scores exactly
 * as they were, its own uploads move them, and removing them brings the scores back (the counts
 * kept by triggers are exact: they equal a count made from scratch after uploads and page edits).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { organizationScope } from "../../server/knowledge/search/scope.js"
import { wordCount } from "../../server/knowledge/search/analyzer.js"
import { createPage } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let otherKey: string
let kb: string
let page: string

beforeAll(async () => {
  server = await startTestServer()
  otherKey = await server.createOrganization("other-tenant")
  kb = await newKnowledgebase()
  await readySource(server, kb, { name: "expenses.md", markdown: true, text: "# Expenses\n\nAttach the receipt to every expense claim before the end of the month." })
  await readySource(server, kb, { name: "travel.md", markdown: true, text: "# Travel\n\nKeep the receipt of every train ticket and hotel night you book." })
  await readySource(server, kb, { name: "lunch.md", text: "Team lunches are paid by the company card, no expense claim needed." })
  page = await createPage(server, kb, { title: "Receipts", bodyMarkdown: "Scan each receipt within a week; the original paper receipt can then go." })
}, 120_000)
afterAll(() => server.stop())

async function newKnowledgebase(key?: string) {
  const response = await server.request("POST", "/knowledgebases", { body: { name: "Statistics" }, ...(key ? { key } : {}) })
  expect(response.status).toBe(201)
  return response.body.knowledgebase.id as string
}
const ranking = async (query: string) => {
  const response = await server.request("POST", `/knowledgebases/${kb}/search`, { body: { query, kinds: ["documents", "pages"] } })
  expect(response.status).toBe(200)
  expect(response.body.retrieval).toBe("lexical")
  return (response.body.results as Array<{ kind: string; id: string; score: number }>).map((hit) => `${hit.kind}:${hit.id}:${hit.score}`)
}
const queries = ["expense receipt", "receipt", "train hotel", "company card claim"]
const rankings = () => Promise.all(queries.map(ranking))

describe("ranking statistics per organization", () => {
  it("another organization's documents and pages leave the scores unchanged; the organization's own move them", async () => {
    const before = await rankings()
    expect(before.every((hits) => hits.length > 0)).toBe(true)

    const otherKb = await newKnowledgebase(otherKey)
    for (let i = 0; i < 6; i++) {
      await readySource(server, otherKb, {
        key: otherKey,
        name: `receipts-${i}.md`,
        text: `Receipt ${i}: every receipt, receipt and expense of the train and the hotel, claim by claim, receipt after receipt. `.repeat(i + 1)
      })
    }
    await createPage(server, otherKb, { title: "Expense receipts", bodyMarkdown: "Receipt receipt expense claim company card train hotel." }, otherKey)
    const otherSearch = await server.request("POST", `/knowledgebases/${otherKb}/search`, { body: { query: "receipt" }, key: otherKey })
    expect(otherSearch.status).toBe(200)
    expect(otherSearch.body.results.length).toBe(7)
    expect(await rankings()).toEqual(before)

    // The organization's own upload changes its statistics: scores move (so the check above can fail)…
    await readySource(server, kb, { name: "receipts.md", text: "Receipt receipt receipt: keep them all, and the hotel ones too." })
    const during = await rankings()
    expect(during).not.toEqual(before)
    expect(await server.request("PATCH", `/knowledgebases/${kb}/pages/${page}`, { body: { patch: [{ op: "replace", oldString: "Scan each receipt within a week", newString: "Scan each expense note\nwithin a week" }] } })).toMatchObject({ status: 200 })
    // A page edit changes its words and the organization's counts: scores move again.
    const edited = await rankings()
    expect(edited).not.toEqual(during)
  }, 120_000)

  it("the kept counts equal a count from scratch, for every organization", async () => {
    const kept = await server.admin(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ scope: string; passages: number; passage_words: number; pages: number; page_words: number }>`
        SELECT scope, passages, passage_words, pages, page_words FROM search_statistics ORDER BY scope`)
    )
    const passages = await server.admin(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ organization_id: string; text: string }>`
        SELECT s.organization_id, p.text FROM passages p JOIN sources s ON s.id = p.source_id`)
    )
    const pages = await server.admin(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ organization_id: string; markdown: string }>`
        SELECT organization_id, markdown FROM pages WHERE template_key != 'folder'`)
    )
    const counted = new Map<string, { passages: number; passage_words: number; pages: number; page_words: number }>()
    const entry = (organizationId: string) => {
      const scope = organizationScope(organizationId)
      if (!counted.has(scope)) counted.set(scope, { passages: 0, passage_words: 0, pages: 0, page_words: 0 })
      return counted.get(scope)!
    }
    for (const row of passages) {
      entry(row.organization_id).passages++
      entry(row.organization_id).passage_words += wordCount(row.text)
    }
    for (const row of pages) {
      entry(row.organization_id).pages++
      entry(row.organization_id).page_words += wordCount(row.markdown)
    }
    expect(counted.size).toBe(2)
    expect(
      kept.map((row) => ({ scope: row.scope, passages: Number(row.passages), passage_words: Number(row.passage_words), pages: Number(row.pages), page_words: Number(row.page_words) }))
    ).toEqual([...counted].map(([scope, counts]) => ({ scope, ...counts })).sort((a, b) => (a.scope < b.scope ? -1 : 1)))
  }, 120_000)
})
