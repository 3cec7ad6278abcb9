/**
 * Tenancy: an organization sees only its own objects. Another organization's objects are
 * `404 not_found` (indistinguishable from ids that exist nowhere), lists never mix, and cursors
 * are bound to the organization that received them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, insertAgents, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let keyA: string
let keyB: string
let idsA: Array<string>
beforeAll(async () => {
  server = await startTestServer()
  keyA = server.key
  keyB = await server.createOrganization("org-b", "pro")
  idsA = []
  for (const name of ["A one", "A two", "A three"]) {
    server.clock.advance(1_000)
    const created = await server.request("POST", "/knowledgebases", { key: keyA, body: { name } })
    expect(created.status).toBe(201)
    idsA.push(created.body.knowledgebase.id)
  }
})
afterAll(() => server.stop())

describe("Knowledgebases across organizations", () => {
  it("organization B lists none of A's Knowledgebases", async () => {
    const list = await server.request("GET", "/knowledgebases", { key: keyB })
    expect(list.status).toBe(200)
    expect(list.body).toEqual({ knowledgebases: [], nextCursor: null })
  })

  it("organization B cannot read any of A's Knowledgebases: 404, like an id that exists nowhere", async () => {
    const nowhere = unknownId()
    const missing = await server.request("GET", `/knowledgebases/${nowhere}`, { key: keyB })
    const missingMessage = expectError(missing, 404, "not_found")
    for (const id of idsA) {
      const foreign = await server.request("GET", `/knowledgebases/${id}`, { key: keyB })
      const message = expectError(foreign, 404, "not_found")
      expect(message.replace(id, "<id>")).toBe(missingMessage.replace(nowhere, "<id>"))
    }
    // A still reads them.
    for (const id of idsA) expect((await server.request("GET", `/knowledgebases/${id}`, { key: keyA })).status).toBe(200)
  })

  it("each organization lists only its own", async () => {
    const created = await server.request("POST", "/knowledgebases", { key: keyB, body: { name: "B only" } })
    expect(created.status).toBe(201)
    const listA = await server.request("GET", "/knowledgebases", { key: keyA })
    const listB = await server.request("GET", "/knowledgebases", { key: keyB })
    expect(listA.body.knowledgebases.map((kb: any) => kb.id)).toEqual(idsA)
    expect(listB.body.knowledgebases.map((kb: any) => kb.name)).toEqual(["B only"])
    expectError(await server.request("GET", `/knowledgebases/${created.body.knowledgebase.id}`, { key: keyA }), 404, "not_found")
  })

  it("a personal key of a member of B sees only B", async () => {
    await server.addMember("b-member@example.com", "member", "org-b")
    const personal = await server.createKey({
      org: "org-b",
      name: "b personal",
      scopes: "all",
      personalFor: "b-member@example.com"
    })
    const list = await server.request("GET", "/knowledgebases", { key: personal })
    expect(list.body.knowledgebases.map((kb: any) => kb.name)).toEqual(["B only"])
    expectError(await server.request("GET", `/knowledgebases/${idsA[0]}`, { key: personal }), 404, "not_found")
  })
})

describe("cursors are bound to the organization", () => {
  it("a cursor from A's Knowledgebase list is refused in B (400) and still works in A", async () => {
    const first = await server.request("GET", "/knowledgebases?limit=1", { key: keyA })
    const cursor: string = first.body.nextCursor
    expect(typeof cursor).toBe("string")
    const inB = await server.request("GET", `/knowledgebases?limit=1&cursor=${encodeURIComponent(cursor)}`, { key: keyB })
    expect(expectError(inB, 400, "invalid_request")).toMatch(/cursor/)
    const inA = await server.request("GET", `/knowledgebases?limit=1&cursor=${encodeURIComponent(cursor)}`, { key: keyA })
    expect(inA.status).toBe(200)
    expect(inA.body.knowledgebases.map((kb: any) => kb.id)).toEqual([idsA[1]])
  })

  it("a cursor from A's Agent list is refused in B", async () => {
    await insertAgents(server, { org: "default", count: 2, prefix: "A agent" })
    const first = await server.request("GET", "/agents?limit=1", { key: keyA })
    expect(first.body.agents).toHaveLength(1)
    const cursor: string = first.body.nextCursor
    expect(typeof cursor).toBe("string")
    expectError(await server.request("GET", `/agents?cursor=${encodeURIComponent(cursor)}`, { key: keyB }), 400, "invalid_request")
  })
})

describe("Agents across organizations", () => {
  it("B lists none of A's Agents", async () => {
    await insertAgents(server, { org: "default", count: 1, prefix: "Only in A" })
    const listB = await server.request("GET", "/agents", { key: keyB })
    expect(listB.body).toEqual({ agents: [], nextCursor: null })
    const listA = await server.request("GET", "/agents", { key: keyA })
    expect(listA.body.agents.length).toBeGreaterThan(0)
  })
})
