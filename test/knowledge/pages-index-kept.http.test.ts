/**
 * Page index answers are kept while no page, Knowledgebase or source is written: a write from any
 * connection (another process, here the admin handle) or through the server's own API shows on the
 * very next listing, each `fields` and query gets its own answer, and a kept answer is never served
 * to another organization.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest"
import { expectError, insertKnowledgebases, sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let kb: string
let folder: string
beforeAll(async () => {
  server = await startTestServer()
  kb = (await insertKnowledgebases(server, { count: 1, prefix: "Kept" }))[0]!.id
  const made = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Policies", templateKey: "folder" } })
  expect(made.status).toBe(201)
  folder = made.body.page.id
  const page = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Refunds", parentPageId: folder } })
  expect(page.status).toBe(201)
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const titles = async (query = "") => {
  const response = await server.request("GET", `/knowledgebases/${kb}/pages${query}`)
  expect(response.status).toBe(200)
  return response.body.pages.map((page: { title: string }) => page.title)
}

it("shows a write committed by another connection on the next listing", async () => {
  expect(await titles()).toEqual(["Policies", "Refunds"])
  expect(await titles()).toEqual(["Policies", "Refunds"])
  await sql(server, (db) => db`UPDATE pages SET title = 'Returns' WHERE knowledgebase_id = ${kb} AND title = 'Refunds'`)
  expect(await titles()).toEqual(["Policies", "Returns"])
  await sql(server, (db) => db`UPDATE pages SET title = 'Refunds' WHERE knowledgebase_id = ${kb} AND title = 'Returns'`)
  expect(await titles()).toEqual(["Policies", "Refunds"])
})

it("shows a write through the server's own API on the next listing, after commits to other tables", async () => {
  expect(await titles()).toEqual(["Policies", "Refunds"])
  expect((await server.request("POST", "/knowledgebases", { body: { name: "Unrelated" } })).status).toBe(201)
  expect(await titles()).toEqual(["Policies", "Refunds"])
  const made = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title: "Shipping", parentPageId: folder } })
  expect(made.status).toBe(201)
  expect(await titles()).toEqual(["Policies", "Refunds", "Shipping"])
  const renamed = await server.request("PATCH", `/knowledgebases/${kb}/pages/${made.body.page.id}`, { body: { description: "How parcels travel." } })
  expect(renamed.status).toBe(200)
  const described = await server.request("GET", `/knowledgebases/${kb}/pages?parentPageId=${folder}`)
  expect(described.body.pages.find((page: { title: string }) => page.title === "Shipping")).toMatchObject({ description: "How parcels travel." })
  await sql(server, (db) => db`DELETE FROM pages WHERE id = ${made.body.page.id}`)
  expect(await titles()).toEqual(["Policies", "Refunds"])
})

it("keeps one answer per query and fields", async () => {
  const all = await server.request("GET", `/knowledgebases/${kb}/pages`)
  const narrowed = await server.request("GET", `/knowledgebases/${kb}/pages?fields=id,title`)
  const top = await server.request("GET", `/knowledgebases/${kb}/pages?parentPageId=null`)
  const again = await server.request("GET", `/knowledgebases/${kb}/pages?fields=id,title`)
  expect(Object.keys(all.body.pages[0]).length).toBeGreaterThan(2)
  expect(narrowed.body.pages.map((page: object) => Object.keys(page).sort())).toEqual([["id", "title"], ["id", "title"]])
  expect(top.body.pages.map((page: { title: string }) => page.title)).toEqual(["Policies"])
  expect(again.text).toBe(narrowed.text)
  const underFolder = await server.request("GET", `/knowledgebases/${kb}/pages?parentPageId=${folder}`)
  expect(underFolder.body.parent).toMatchObject({ id: folder, title: "Policies" })
})

it("never serves a kept answer to another organization", async () => {
  const stranger = await server.createOrganization("stranger")
  // Each key's first request of the minute records its last use (a commit); after that, none does.
  expectError(await server.request("GET", `/knowledgebases/${kb}/pages`, { key: stranger }), 404, "not_found")
  expect(await titles()).toEqual(["Policies", "Refunds"])
  expect(await titles()).toEqual(["Policies", "Refunds"])
  expectError(await server.request("GET", `/knowledgebases/${kb}/pages`, { key: stranger }), 404, "not_found")
})
