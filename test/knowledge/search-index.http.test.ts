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

// SQLite only: the passages are written straight into the data directory's SQLite file.
describe.runIf(onSqlite)("a Knowledgebase holding a small part of the index", () => {
  let crowded: string
  let few: string
  /** Passage ids by what they are, in id order. */
  const ids: Record<"gaurFew" | "zebuFew" | "offGaur" | "crowdGaur", Array<string>> = { gaurFew: [], zebuFew: [], offGaur: [], crowdGaur: [] }

  beforeAll(async () => {
    crowded = await newKnowledgebase("Crowded")
    few = await newKnowledgebase("Few")
    const crowdSource = await readySource(server, crowded, { name: "Crowd", text: "Seed passage about oxen." })
    const fewSource = await readySource(server, few, { name: "Few", text: "Seed passage about yaks." })
    const offSource = await readySource(server, few, { name: "Off", text: "Seed passage about bison." })
    const org = await organizationId(server)
    const db = new Database(join(server.dataDir, "svc.sqlite"))
    try {
      const insert = db.prepare("INSERT INTO passages (source_id, seq, section, start_offset, end_offset, scope, text) VALUES (?, ?, NULL, 0, 0, ?, ?)")
      const add = (source: string, kb: string, seq: number, text: string) => String(insert.run(source, seq, passageScope(org, [kb]), text).lastInsertRowid)
      db.transaction(() => {
        // FTS5 ranks these first: the word four times in four words, in a document that is switched off…
        for (let i = 0; i < 5; i++) ids.offGaur.push(add(offSource.id, few, 10 + i, "gaur gaur gaur gaur"))
        // …then the other Knowledgebase's, then the few the asked Knowledgebase can show.
        for (let i = 0; i < 30; i++) ids.crowdGaur.push(add(crowdSource.id, crowded, 10 + i, "gaur gaur gaur herd"))
        for (let i = 0; i < 200; i++) add(crowdSource.id, crowded, 100 + i, "zebu zebu zebu herd")
        for (let i = 0; i < 60; i++) ids.gaurFew.push(add(fewSource.id, few, 10 + i, `a gaur grazes quietly in the tall grass near the river bank at dusk ${i}`))
        for (let i = 0; i < 8; i++) ids.zebuFew.push(add(fewSource.id, few, 100 + i, `a zebu grazes quietly in the tall grass near the river bank at dawn ${i}`))
      })()
      db.prepare("UPDATE sources SET disabled = 1 WHERE id = ?").run(offSource.id)
    } finally {
      db.close()
    }
  })

  const page = async (kb: string, query: string, limit: number) => {
    const response = await server.request("POST", `/knowledgebases/${kb}/search`, { body: { query, kinds: ["documents"], limit, collapse: false } })
    expect(response.status).toBe(200)
    return (response.body.results as Array<{ id: string }>).map((hit) => hit.id)
  }

  it("fills a page from candidates past the first ones when the best belong elsewhere or to a document switched off", async () => {
    // 95 passages hold the word; FTS5's best 50 hold 15 the asked Knowledgebase may show.
    expect(await page(few, "gaur", 20)).toEqual(ids.gaurFew.slice(0, 20))
    expect(await page(crowded, "gaur", 20)).toEqual(ids.crowdGaur.slice(0, 20))
  })

  it("asks the index within the Knowledgebase when none of the best candidates are in it", async () => {
    // 208 passages hold the word; FTS5's best 150 are all the other Knowledgebase's.
    expect(await page(few, "zebu", 10)).toEqual(ids.zebuFew)
  })
})
