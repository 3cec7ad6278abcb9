/**
 * Search scores in a small index (the README's tour: a new Knowledgebase, a few short documents):
 * real and comparable, higher for better hits, for documents and pages alike. FTS5's own BM25
 * floors the IDF of a word held by half of the rows or more, which made every such hit score 0.
 * Each suite starts its own server, so the index holds only what the test put there.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createPage } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeEach(async () => {
  server = await startTestServer()
})
afterEach(() => server.stop())

const newKnowledgebase = async (name: string) => {
  const response = await server.request("POST", "/knowledgebases", { body: { name } })
  expect(response.status).toBe(201)
  return response.body.knowledgebase.id as string
}
const search = async (kb: string, query: string, kinds: ReadonlyArray<string>) => {
  const response = await server.request("POST", `/knowledgebases/${kb}/search`, { body: { query, kinds } })
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
  return response.body.results as Array<{ kind: string; id: string; title: string; score: number; citation: { sourceId?: string } }>
}

describe("scores in a small Knowledgebase", () => {
  it("two documents: the one holding both words scores higher than the one holding one, both above 0", async () => {
    const kb = await newKnowledgebase("Tour")
    const both = await readySource(server, kb, {
      name: "expenses.md",
      markdown: true,
      text: "# Expenses\n\nAttach the receipt to every expense claim before the end of the month."
    })
    const one = await readySource(server, kb, {
      name: "travel.md",
      markdown: true,
      text: "# Travel\n\nKeep the receipt of every train ticket and hotel night you book."
    })
    const results = await search(kb, "expense receipt", ["documents"])
    expect(results.map((hit) => hit.citation.sourceId)).toEqual([both.id, one.id])
    expect(results[0]!.score).toBeGreaterThan(0)
    expect(results[1]!.score).toBeGreaterThan(0)
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score)
  })

  it("a word every document holds still scores above 0", async () => {
    const kb = await newKnowledgebase("Common")
    await readySource(server, kb, { name: "a.md", markdown: true, text: "The receipt for lunch." })
    await readySource(server, kb, { name: "b.md", markdown: true, text: "The receipt for dinner, and the receipt for the taxi." })
    const results = await search(kb, "receipt", ["documents"])
    expect(results).toHaveLength(2)
    for (const hit of results) expect(hit.score).toBeGreaterThan(0)
    expect(results[0]!.title).toBe("b.md")
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score)
  })

  it("pages rank the same way: both words above one word, scores above 0", async () => {
    const kb = await newKnowledgebase("Pages")
    const both = await createPage(server, kb, { title: "Claims", bodyMarkdown: "Every expense needs its receipt." })
    const one = await createPage(server, kb, { title: "Trips", bodyMarkdown: "Keep the receipt of each ticket." })
    const results = await search(kb, "expense receipt", ["pages"])
    expect(results.map((hit) => hit.id)).toEqual([both, one])
    expect(results[1]!.score).toBeGreaterThan(0)
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score)
  })
})
