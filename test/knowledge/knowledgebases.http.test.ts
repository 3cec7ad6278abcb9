/**
 * The Knowledgebase endpoints: create (shape, defaults, validation), read, list, the plan cap,
 * and `GET /agents` on an empty organization.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import {
  countKnowledgebases,
  expectError,
  insertKnowledgebases,
  listAllKnowledgebases,
  setPlan,
  sql,
  unknownId
} from "../support/fixtures.js"
import { uuidPattern } from "../support/patterns.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const now = () => new Date(server.clock.now()).toISOString()

const create = (body: unknown, key?: string) =>
  server.request("POST", "/knowledgebases", { body, ...(key === undefined ? {} : { key }) })

describe("POST /knowledgebases", () => {
  it("answers 201 with the Knowledgebase", async () => {
    const at = now()
    const response = await create({ name: "Handbook" })
    expect(response.status).toBe(201)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(response.body).toEqual({
      knowledgebase: {
        id: expect.stringMatching(uuidPattern),
        name: "Handbook",
        description: "",
        createdAt: at,
        updatedAt: at,
        counts: { sources: 0, pages: 0 }
      }
    })
  })

  it("keeps the description", async () => {
    const response = await create({ name: "Support", description: "How we answer customers." })
    expect(response.status).toBe(201)
    expect(response.body.knowledgebase).toMatchObject({ name: "Support", description: "How we answer customers." })
  })

  it("each create makes a new Knowledgebase, even with the same name", async () => {
    const a = await create({ name: "Twin" })
    const b = await create({ name: "Twin" })
    expect([a.status, b.status]).toEqual([201, 201])
    expect(a.body.knowledgebase.id).not.toBe(b.body.knowledgebase.id)
  })

  it("accepts names up to 200 characters and unicode", async () => {
    expect((await create({ name: "n".repeat(200) })).status).toBe(201)
    const unicode = await create({ name: "Wissensbasis – 知识库 📚" })
    expect(unicode.status).toBe(201)
    expect(unicode.body.knowledgebase.name).toBe("Wissensbasis – 知识库 📚")
    expect((await create({ name: "d", description: "x".repeat(2_000) })).status).toBe(201)
  })

  it.each([
    ["a missing name", {}, "name"],
    ["a null name", { name: null }, "name"],
    ["a numeric name", { name: 42 }, "name"],
    ["an empty name", { name: "" }, "name"],
    ["a blank name", { name: "   " }, "name"],
    ["a name of 201 characters", { name: "n".repeat(201) }, "name"],
    ["a numeric description", { name: "ok", description: 1 }, "description"],
    ["a null description", { name: "ok", description: null }, "description"],
    ["a description of 2001 characters", { name: "ok", description: "x".repeat(2_001) }, "description"],
    ["an unknown property", { name: "ok", sources: [] }, "sources"],
    ["an id chosen by the client", { name: "ok", id: "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11" }, "id"]
  ])("%s → 400 invalid_request naming the field, nothing written", async (_case, body, field) => {
    const before = await countKnowledgebases(server)
    const message = expectError(await create(body), 400, "invalid_request")
    expect(message).toMatch(new RegExp(`\\b${field}\\b`))
    expect(await countKnowledgebases(server)).toBe(before)
  })
})

describe("GET /knowledgebases/{id}", () => {
  it("returns the Knowledgebase with its (empty) sources and page index", async () => {
    const created = (await create({ name: "Detail", description: "Read me" })).body.knowledgebase
    const response = await server.request("GET", `/knowledgebases/${created.id}`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ knowledgebase: { ...created, sources: [], pages: [] } })
  })

  it("an unknown id → 404 not_found", async () => {
    expectError(await server.request("GET", `/knowledgebases/${unknownId()}`), 404, "not_found")
    expectError(await server.request("GET", "/knowledgebases/not-a-uuid"), 404, "not_found")
  })
})

describe("GET /knowledgebases", () => {
  it("answers {knowledgebases, nextCursor} with the listed shape, oldest first", async () => {
    const key = await server.createOrganization("listing", "pro")
    const made: Array<any> = []
    for (const name of ["First", "Second", "Third"]) {
      server.clock.advance(1)
      made.push((await create({ name }, key)).body.knowledgebase)
    }
    const response = await server.request("GET", "/knowledgebases", { key })
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(["knowledgebases", "nextCursor"])
    expect(response.body).toEqual({ knowledgebases: made, nextCursor: null })
  })

  it("a listing polled again sees every commit at once: through the API, from another connection, and a rename in SQL", async () => {
    const key = await server.createOrganization("polled", "pro")
    const names = async (query = "") =>
      ((await server.request("GET", `/knowledgebases${query}`, { key })).body.knowledgebases as Array<{ name: string }>).map((kb) => kb.name)
    expect(await names()).toEqual([])
    expect(await names()).toEqual([])
    server.clock.advance(1)
    await create({ name: "Through the API" }, key)
    expect(await names()).toEqual(["Through the API"])
    await insertKnowledgebases(server, { org: "polled", count: 1, start: "2099-01-01T00:00:00.000Z", prefix: "Other connection" })
    expect(await names()).toEqual(["Through the API", "Other connection 0"])
    expect(await names("?limit=1")).toEqual(["Through the API"])
    await sql(server, (db) => db`UPDATE knowledgebases SET name = 'Renamed' WHERE name = 'Through the API'`)
    expect(await names()).toEqual(["Renamed", "Other connection 0"])
    expect(await names("?limit=1")).toEqual(["Renamed"])
    // The same kept page, answered with different fields.
    const listed = async (query: string) => (await server.request("GET", `/knowledgebases${query}`, { key })).body.knowledgebases
    expect((await listed("?fields=name")).map((kb: object) => Object.keys(kb))).toEqual([["name"], ["name"]])
    expect((await listed("?fields=id,counts")).map((kb: object) => Object.keys(kb).sort())).toEqual([["counts", "id"], ["counts", "id"]])
    expect((await listed("?fields=name"))[0]).toEqual({ name: "Renamed" })
  })

  it("an empty organization answers an empty list", async () => {
    const key = await server.createOrganization("empty", "pro")
    expect((await server.request("GET", "/knowledgebases", { key })).body).toEqual({ knowledgebases: [], nextCursor: null })
  })
})

describe("the plan cap", () => {
  it("a Pro organization creates 50 Knowledgebases; the 51st is 403 plan_limit and nothing is written", async () => {
    const key = await server.createOrganization("pro-cap", "pro")
    for (let i = 0; i < 50; i++) {
      const response = await create({ name: `KB ${i}` }, key)
      expect({ i, status: response.status }).toEqual({ i, status: 201 })
    }
    const refused = await create({ name: "KB 50" }, key)
    expect(expectError(refused, 403, "plan_limit")).toMatch(/50/)
    expect(await countKnowledgebases(server, "pro-cap")).toBe(50)
    expect((await listAllKnowledgebases(server, key)).length).toBe(50)
  })

  it("the cap follows the plan: raising it to Agency (200) allows more, up to 200", async () => {
    const key = await server.createOrganization("agency-cap", "pro")
    await insertKnowledgebases(server, { org: "agency-cap", count: 50 })
    expectError(await create({ name: "Over Pro" }, key), 403, "plan_limit")
    await setPlan(server, "agency-cap", "agency")
    expect((await create({ name: "Within Agency" }, key)).status).toBe(201)
    await insertKnowledgebases(server, { org: "agency-cap", count: 148, start: "2026-02-01T00:00:00.000Z" })
    expect((await create({ name: "The 200th" }, key)).status).toBe(201)
    expect(await countKnowledgebases(server, "agency-cap")).toBe(200)
    expectError(await create({ name: "The 201st" }, key), 403, "plan_limit")
    expect(await countKnowledgebases(server, "agency-cap")).toBe(200)
  })

  it("the cap counts only the organization's own Knowledgebases", async () => {
    await server.createOrganization("full-neighbour", "pro")
    await insertKnowledgebases(server, { org: "full-neighbour", count: 50 })
    const key = await server.createOrganization("fresh-cap", "pro")
    await insertKnowledgebases(server, { org: "fresh-cap", count: 49 })
    expect((await create({ name: "The 50th" }, key)).status).toBe(201)
    expectError(await create({ name: "The 51st" }, key), 403, "plan_limit")
  })
})

describe("GET /agents", () => {
  it("answers {agents: [], nextCursor: null} when nothing is published", async () => {
    const response = await server.request("GET", "/agents")
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ agents: [], nextCursor: null })
  })
})
