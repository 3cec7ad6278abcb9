/**
 * How document search uses its index: passages carry scope tokens (organization, every
 * Knowledgebase the document is attached to), kept current when a ready document joins another
 * Knowledgebase; and in a large index, words most passages hold are left out of the ranking when the
 * query has rarer ones (a cutoff frequency), while a query of only such words answers in index order.
 */
import Database from "better-sqlite3"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { passageScope } from "../../server/knowledge/search/scope.js"
import { setCredits } from "../support/knowledge.js"
import { readySource, uploadSource, waitForSource } from "../support/sources.js"
import { organizationId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { onSqlite } from "../support/postgres.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ server: { requestsPerMinute: 100_000 } })
  await setCredits(server, 1_000_000)
})
afterAll(() => server.stop())

const newKnowledgebase = async (name: string) => {
  const response = await server.request("POST", "/knowledgebases", { body: { name } })
  expect(response.status).toBe(201)
  return response.body.knowledgebase.id as string
}
const search = async (kb: string, query: string) => {
  const response = await server.request("POST", `/knowledgebases/${kb}/search`, { body: { query, kinds: ["documents"], limit: 200, collapse: false } })
  expect(response.status).toBe(200)
  return response.body.results as Array<{ id: string; score: number; citation: { sourceId: string } }>
}

describe("scope tokens", () => {
  it("a ready document attached to a second Knowledgebase becomes searchable there, and nowhere else", async () => {
    const first = await newKnowledgebase("First")
    const second = await newKnowledgebase("Second")
    const third = await newKnowledgebase("Third")
    const text = "Quokkas wander the scoped archipelago at dawn."
    const source = await readySource(server, first, { name: "Quokkas", text })
    expect((await search(second, "archipelago")).length).toBe(0)
    const again = await uploadSource(server, second, { name: "Quokkas again", text })
    expect(again.source.id).toBe(source.id)
    expect((await search(second, "archipelago")).map((hit) => hit.citation.sourceId)).toEqual([source.id])
    expect((await search(first, "archipelago")).map((hit) => hit.citation.sourceId)).toEqual([source.id])
    expect(await search(third, "archipelago")).toEqual([])
    expect((await search("all", "archipelago")).map((hit) => hit.citation.sourceId)).toEqual([source.id])
  })

  it("a document attached while it is still processing is indexed with every Knowledgebase it joined", async () => {
    const first = await newKnowledgebase("Early")
    const second = await newKnowledgebase("Late")
    const text = "Numbats forage termites along the processing ridge."
    const uploaded = await uploadSource(server, first, { name: "Numbats", text })
    await uploadSource(server, second, { name: "Numbats", text })
    await waitForSource(server, first, uploaded.source.id)
    expect((await search(second, "termites")).map((hit) => hit.citation.sourceId)).toEqual([uploaded.source.id])
    expect((await search(first, "termites")).map((hit) => hit.citation.sourceId)).toEqual([uploaded.source.id])
  })
})

// SQLite only: the large index is written straight into the data directory's SQLite file.
describe.runIf(onSqlite)("common words in a large index", () => {
  const filler = 6_000
  let kb: string
  let rareIds: Array<string>

  beforeAll(async () => {
    kb = await newKnowledgebase("Large")
    const source = await readySource(server, kb, { name: "Seed", text: "Seed passage about wombats." })
    const org = await organizationId(server)
    const db = new Database(join(server.dataDir, "svc.sqlite"))
    try {
      const insert = db.prepare(
        "INSERT INTO passages (source_id, seq, section, start_offset, end_offset, scope, text) VALUES (?, ?, NULL, 0, 0, ?, ?)"
      )
      const scope = passageScope(org, [kb])
      db.transaction(() => {
        for (let i = 1; i <= filler; i++) {
          const rare = i % 2_000 === 0 ? " platypus platypus" : ""
          insert.run(source.id, i, scope, `ubiquitous filler passage number ${i}${rare}`)
        }
      })()
      rareIds = (db.prepare("SELECT id FROM passages WHERE text LIKE '%platypus%' ORDER BY id").all() as Array<{ id: number }>).map((row) => String(row.id))
    } finally {
      db.close()
    }
  })

  it("a query with a rarer word matches and ranks on it alone: passages holding only the common word are left out", async () => {
    const results = await search(kb, "ubiquitous platypus")
    expect(results.map((hit) => hit.id).sort()).toEqual([...rareIds].sort())
    for (const hit of results) expect(hit.score).toBeGreaterThan(0)
  })

  it("a query of only common words finds its candidates in index order and still scores them", async () => {
    const results = await search(kb, "ubiquitous filler")
    expect(results).toHaveLength(200)
    expect(results.every((hit) => hit.score > 0)).toBe(true)
    // The same words in passages of one length: equal scores, in index order.
    expect(new Set(results.map((hit) => hit.score)).size).toBe(1)
    const ids = results.map((hit) => Number(hit.id))
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
  })

  it("a word under the cutoff still ranks every passage it is in", async () => {
    const results = await search(kb, "platypus")
    expect(results.map((hit) => hit.id).sort()).toEqual([...rareIds].sort())
  })
})
