/**
 * Lists: `limit` (1..200, default 50), opaque tamper-evident cursors bound to their list, a walk
 * that visits every item once in `(createdAt, id)` order, and `fields` projection.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, insertAgents, insertKnowledgebases, type KnowledgebaseFixture } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
/** The default organization's 250 Knowledgebases in list order; groups of three share a timestamp. */
let expected: Array<KnowledgebaseFixture>
beforeAll(async () => {
  server = await startTestServer()
  const rows = await insertKnowledgebases(server, { count: 250, step: (i) => Math.floor(i / 3) * 1_000 })
  expected = [...rows].sort((a, b) =>
    a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1
  )
  await insertAgents(server, { count: 3 })
})
afterAll(() => server.stop())
// Walks make many requests: each test starts with a fresh rate-limit window.
beforeEach(() => server.clock.advance(60_000))

const ids = (items: Array<{ id: string }>) => items.map((item) => item.id)
const withCursor = (path: string, cursor: string) =>
  `${path}${path.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`

/** Walks a list from the start with the given page sizes (cycled), returning pages' items. */
const walk = async (path: string, limits: Array<number | undefined>, key?: string) => {
  const pages: Array<Array<any>> = []
  let cursor: string | null = null
  do {
    const limit: number | undefined = limits[pages.length % limits.length]
    const base: string = limit === undefined ? path : `${path}?limit=${limit}`
    const response = await server.request("GET", cursor === null ? base : withCursor(base, cursor), key === undefined ? {} : { key })
    expect(response.status).toBe(200)
    pages.push(response.body.knowledgebases)
    cursor = response.body.nextCursor
    expect(pages.length).toBeLessThan(300)
  } while (cursor !== null)
  return pages
}

describe("limit", () => {
  it("defaults to 50", async () => {
    const page = await server.request("GET", "/knowledgebases")
    expect(page.status).toBe(200)
    expect(ids(page.body.knowledgebases)).toEqual(ids(expected.slice(0, 50)))
    expect(typeof page.body.nextCursor).toBe("string")
  })

  it("goes up to 200", async () => {
    const page = await server.request("GET", "/knowledgebases?limit=200")
    expect(ids(page.body.knowledgebases)).toEqual(ids(expected.slice(0, 200)))
    expect(typeof page.body.nextCursor).toBe("string")
    const one = await server.request("GET", "/knowledgebases?limit=1")
    expect(ids(one.body.knowledgebases)).toEqual([expected[0]!.id])
  })

  it.each(["0", "201", "abc", "-1", "1.5", "1e3", ""])("limit=%s → 400 invalid_request naming limit", async (limit) => {
    const response = await server.request("GET", `/knowledgebases?limit=${limit}`)
    expect(expectError(response, 400, "invalid_request")).toMatch(/limit/)
  })

  it("applies to /agents too", async () => {
    expectError(await server.request("GET", "/agents?limit=201"), 400, "invalid_request")
    const page = await server.request("GET", "/agents?limit=2")
    expect(page.body.agents).toHaveLength(2)
    expect(typeof page.body.nextCursor).toBe("string")
  })
})

describe("walking with cursors", () => {
  it("visits every item exactly once, in order, and ends with nextCursor null", async () => {
    for (const limits of [[undefined], [200], [7], [1, 13, 50, 3]]) {
      const pages = await walk("/knowledgebases", limits)
      expect(ids(pages.flat())).toEqual(ids(expected))
      expect(pages.every((page) => page.length > 0)).toBe(true)
    }
  })

  it("page sizes are exact and there is no empty page after an exact multiple", async () => {
    const pages = await walk("/knowledgebases", [50])
    expect(pages.map((page) => page.length)).toEqual([50, 50, 50, 50, 50])
    const byTwoHundredFifty = await walk("/knowledgebases", [125])
    expect(byTwoHundredFifty.map((page) => page.length)).toEqual([125, 125])
  })

  it("walks /agents the same way", async () => {
    const first = await server.request("GET", "/agents?limit=2")
    const second = await server.request("GET", withCursor("/agents?limit=2", first.body.nextCursor))
    expect(second.status).toBe(200)
    expect(second.body.agents).toHaveLength(1)
    expect(second.body.nextCursor).toBeNull()
    const all = await server.request("GET", "/agents")
    expect([...first.body.agents, ...second.body.agents]).toEqual(all.body.agents)
  })

  it("items created during a walk appear at its end; pages already served never shift", async () => {
    const key = await server.createOrganization("growing", "pro")
    await insertKnowledgebases(server, { org: "growing", count: 5, prefix: "Old" })
    const first = await server.request("GET", "/knowledgebases?limit=2", { key })
    expect(first.body.knowledgebases.map((kb: any) => kb.name)).toEqual(["Old 0", "Old 1"])
    const created = await server.request("POST", "/knowledgebases", { key, body: { name: "New" } })
    expect(created.status).toBe(201)
    const rest: Array<string> = []
    let cursor: string | null = first.body.nextCursor
    while (cursor !== null) {
      const page = await server.request("GET", withCursor("/knowledgebases?limit=2", cursor), { key })
      rest.push(...page.body.knowledgebases.map((kb: any) => kb.name))
      cursor = page.body.nextCursor
    }
    expect(rest).toEqual(["Old 2", "Old 3", "Old 4", "New"])
  })
})

describe("cursors are opaque and tamper-evident", () => {
  let cursor: string
  beforeAll(async () => {
    cursor = (await server.request("GET", "/knowledgebases?limit=10")).body.nextCursor
    expect(typeof cursor).toBe("string")
  })

  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
  /** Replaces the character at `at` with one whose top two bits differ, so the decoded bytes change. */
  const flip = (text: string, at: number) =>
    `${text.slice(0, at)}${alphabet[(alphabet.indexOf(text[at]!) + 32) % 64]}${text.slice(at + 1)}`

  it("a cursor with a character changed (in its payload or its signature) is 400", async () => {
    const dot = cursor.indexOf(".")
    for (const at of [0, Math.floor(dot / 2), dot - 2, dot + 1, dot + 10]) {
      const response = await server.request("GET", withCursor("/knowledgebases", flip(cursor, at)))
      expect(expectError(response, 400, "invalid_request")).toMatch(/cursor/)
    }
  })

  it("a cursor has one spelling: its signature re-encoded with other unused bits is 400", async () => {
    // 16 signature bytes take 22 base64url characters; the last one carries 2 bits of data and
    // 4 unused bits. Changing an unused bit gives a different string that decodes to the same bytes.
    const last = cursor.length - 1
    const respelled = `${cursor.slice(0, last)}${alphabet[alphabet.indexOf(cursor[last]!) ^ 1]}`
    expect(respelled).not.toBe(cursor)
    const response = await server.request("GET", withCursor("/knowledgebases", respelled))
    expectError(response, 400, "invalid_request")
  })

  it("a cursor pointing elsewhere with the old signature is 400", async () => {
    const [payload, signature] = cursor.split(".")
    const decoded = JSON.parse(Buffer.from(payload!, "base64url").toString())
    const forged = { ...decoded, p: [expected[200]!.createdAt, expected[200]!.id] }
    const forgedCursor = `${Buffer.from(JSON.stringify(forged)).toString("base64url")}.${signature}`
    expectError(await server.request("GET", withCursor("/knowledgebases", forgedCursor)), 400, "invalid_request")
  })

  it.each(["garbage", "a.b", "a.b.c", "."])("a made-up cursor %j is 400", async (made) => {
    expectError(await server.request("GET", withCursor("/knowledgebases", made)), 400, "invalid_request")
  })

  it("a cursor from GET /agents is refused by GET /knowledgebases, and the other way round", async () => {
    const agentsCursor: string = (await server.request("GET", "/agents?limit=1")).body.nextCursor
    expect(typeof agentsCursor).toBe("string")
    expectError(await server.request("GET", withCursor("/knowledgebases", agentsCursor)), 400, "invalid_request")
    expectError(await server.request("GET", withCursor("/agents", cursor)), 400, "invalid_request")
  })

  it("the untouched cursor works and continues where the page ended", async () => {
    const next = await server.request("GET", withCursor("/knowledgebases?limit=10", cursor))
    expect(ids(next.body.knowledgebases)).toEqual(ids(expected.slice(10, 20)))
  })
})

describe("fields", () => {
  it("fields=id,name projects every item to exactly those fields, and paging still works", async () => {
    const page = await server.request("GET", "/knowledgebases?fields=id,name&limit=100")
    expect(page.status).toBe(200)
    expect(page.body.knowledgebases).toEqual(expected.slice(0, 100).map(({ id, name }) => ({ id, name })))
    const next = await server.request("GET", withCursor("/knowledgebases?fields=id,name&limit=100", page.body.nextCursor))
    expect(next.body.knowledgebases).toEqual(expected.slice(100, 200).map(({ id, name }) => ({ id, name })))
  })

  it("every documented field may be asked for", async () => {
    const page = await server.request("GET", "/knowledgebases?limit=1&fields=counts,updatedAt")
    expect(page.body.knowledgebases).toEqual([{ counts: { sources: 0, pages: 0 }, updatedAt: expected[0]!.createdAt }])
  })

  it("an unknown field name is 400 naming it", async () => {
    const response = await server.request("GET", "/knowledgebases?fields=id,colour")
    expect(expectError(response, 400, "invalid_request")).toContain("colour")
  })

  it("/agents takes fields too (docs/decisions.md: every list whose items have more than an id)", async () => {
    const page = await server.request("GET", "/agents?fields=id,name")
    expect(page.status).toBe(200)
    expect(page.body.agents.length).toBe(3)
    for (const agent of page.body.agents) expect(Object.keys(agent).sort()).toEqual(["id", "name"])
    expect(expectError(await server.request("GET", "/agents?fields=colour"), 400, "invalid_request")).toContain("colour")
  })
})
