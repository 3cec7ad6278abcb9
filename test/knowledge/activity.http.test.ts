/**
 * Each key's recent Knowledgebase activity (Authentication point 8): searches are recorded with a
 * fingerprint of the query (stable, insensitive to case and spacing) and what came back; the
 * search text itself is stored nowhere in the database; reads of a source, a page and a
 * Knowledgebase's detail are recorded, lists are not; one key's activity never shows under another.
 */
import Database from "better-sqlite3"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { ActivityLog, activityKept, type ActivityRecord } from "../../server/knowledge/activity/service.js"
import { createKeyRecord, expectError, insertKnowledgebases, organizationId, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createFolder, createPage, organizationOf, setCredits } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { onSqlite } from "../support/postgres.js"

let server: TestServer
let orgId: string
beforeAll(async () => {
  server = await startTestServer()
  orgId = await organizationId(server)
})
afterAll(() => server.stop())
// Each test starts with a fresh rate-limit window (120 requests per minute per key).
beforeEach(() => server.clock.advance(60_000))

const fingerprintPattern = /^hmac-sha256:[0-9a-f]{16}$/
const now = () => new Date(server.clock.now()).toISOString()

let keyCounter = 0
/** A fresh organization key (so its activity starts empty) with its id. */
const newKey = async (scopes: ReadonlyArray<string> | "all" = ["knowledge:read", "knowledge:write"]) => {
  const created = await createKeyRecord(server, { name: `activity ${++keyCounter}`, scopes })
  return { id: created.key.id, secret: created.secret }
}
/** A key's activity as the CLI reads it, after the server wrote what it holds (it writes in batches). */
const activity = async (keyId: string, org = orgId): Promise<ReadonlyArray<ActivityRecord>> => {
  await server.flush()
  return server.admin(Effect.flatMap(ActivityLog, (log) => log.forKey(org, keyId)))
}
const newest = async (keyId: string) => (await activity(keyId))[0]

const newKnowledgebase = async (name = "Activity"): Promise<string> =>
  (await insertKnowledgebases(server, { count: 1, prefix: name }))[0]!.id
const search = (kb: string, body: unknown, key: string) => server.request("POST", `/knowledgebases/${kb}/search`, { body, key })
const searched = async (kb: string, body: Record<string, unknown>, key: string) => {
  const response = await search(kb, body, key)
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
  return response.body
}

/** Every text or blob value of every table of the database, read-only, that contains `needle` (case-insensitive). */
const occurrences = (needle: string): Array<string> => {
  const db = new Database(join(server.dataDir, "svc.sqlite"), { readonly: true, fileMustExist: true })
  const found: Array<string> = []
  try {
    const lower = needle.toLowerCase()
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["knowledge_activity", "passages", "pages", "settings"]))
    for (const { name } of tables) {
      let rows: Array<Record<string, unknown>>
      try {
        rows = db.prepare(`SELECT * FROM "${name.replaceAll('"', '""')}"`).all() as Array<Record<string, unknown>>
      } catch {
        continue
      }
      for (const row of rows) {
        for (const [column, value] of Object.entries(row)) {
          const text = typeof value === "string" ? value : Buffer.isBuffer(value) ? value.toString("latin1") : null
          if (text !== null && text.toLowerCase().includes(lower)) found.push(`${name}.${column}`)
        }
      }
    }
  } finally {
    db.close()
  }
  // And the raw bytes of the database files (the write-ahead log included).
  for (const suffix of ["", "-wal", "-journal"]) {
    const file = join(server.dataDir, `svc.sqlite${suffix}`)
    if (existsSync(file) && readFileSync(file).toString("latin1").toLowerCase().includes(lower(needle))) found.push(`file svc.sqlite${suffix}`)
  }
  return found
}
const lower = (text: string) => text.toLowerCase()

describe("searches", () => {
  it("records action search with a query fingerprint, the Knowledgebase, the kinds and what came back", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    const src = await readySource(server, kb, { name: "Refund policy", text: "Refunds within thirty days." })
    const page = await createPage(server, kb, { title: "Refund page", bodyMarkdown: "How refunds work." })
    const at = now()
    const body = await searched(kb, { query: "refunds" }, key.secret)
    expect(body.results).toHaveLength(2)
    const entry = await newest(key.id)
    expect(entry).toEqual({
      at,
      connectionId: null,
      action: "search",
      knowledgebaseId: kb,
      queryFingerprint: expect.stringMatching(fingerprintPattern),
      kinds: ["documents", "pages"],
      resultCount: 2,
      results: expect.arrayContaining([
        { kind: "document", id: src.id, title: "Refund policy" },
        { kind: "page", id: page, title: "Refund page" }
      ])
    })
    expect(entry!.results).toHaveLength(2)
    // The results are listed in the order they came back.
    expect(entry!.results.map((r) => r.id)).toEqual(body.results.map((r: any) => (r.kind === "document" ? r.citation.sourceId : r.id)))
  })

  it("a search of `all` is recorded without a Knowledgebase; an empty result is recorded too", async () => {
    const key = await newKey()
    await searched("all", { query: "nothingmatchesthisqzx", kinds: ["pages"] }, key.secret)
    expect(await newest(key.id)).toMatchObject({
      action: "search",
      knowledgebaseId: null,
      kinds: ["pages"],
      resultCount: 0,
      results: [],
      queryFingerprint: expect.stringMatching(fingerprintPattern)
    })
  })

  it("the fingerprint is stable for the same query, ignores case and extra spaces, and differs for another query", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    const fingerprintOf = async (query: string) => {
      await searched(kb, { query, kinds: ["pages"] }, key.secret)
      return (await newest(key.id))!.queryFingerprint
    }
    const first = await fingerprintOf("refund window")
    expect(first).toMatch(fingerprintPattern)
    expect(await fingerprintOf("refund window")).toBe(first)
    expect(await fingerprintOf("  Refund   WINDOW ")).toBe(first)
    expect(await fingerprintOf("REFUND\twindow")).toBe(first)
    expect(await fingerprintOf("refund windows")).not.toBe(first)
    expect(await fingerprintOf("window refund")).not.toBe(first)
    // The same query from another key gives the same fingerprint (it names the text, not the caller).
    const other = await newKey()
    await searched(kb, { query: "Refund Window", kinds: ["pages"] }, other.secret)
    expect((await newest(other.id))!.queryFingerprint).toBe(first)
    // And it is not a plain hash of the text.
    expect(first).not.toContain("refund")
  })

  // SQLite only: it reads the data directory's database file byte by byte.
  it.runIf(onSqlite)("the search text is stored nowhere in the database, only its fingerprint", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    await createPage(server, kb, { title: "Searchable", bodyMarkdown: "A page about refunds." })
    const secretWord = "quixotrellisvbn"
    const query = `refunds ${secretWord} Marmalade-Xylophone`
    await searched(kb, { query }, key.secret)
    await searched("all", { query: `${secretWord} again`, kinds: ["pages"] }, key.secret)
    // A refused search (unknown Knowledgebase, validation) leaves no trace either.
    expectError(await search(unknownId(), { query: `${secretWord} missing` }, key.secret), 404, "not_found")
    expectError(await search(kb, { query: `${secretWord} extra`, bogus: 1 }, key.secret), 400, "invalid_request")
    expect((await activity(key.id)).filter((entry) => entry.action === "search")).toHaveLength(2)
    expect(occurrences(secretWord)).toEqual([])
    expect(occurrences("marmalade-xylophone")).toEqual([])
    expect(occurrences(query)).toEqual([])
    // The scan does find text that is stored (so it would have found the query).
    expect(occurrences("A page about refunds.")).not.toEqual([])
  })

  it("refused searches (404, 400, 402) are not recorded", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    expectError(await search(unknownId(), { query: "refund" }, key.secret), 404, "not_found")
    expectError(await search(kb, { query: "?!" }, key.secret), 400, "invalid_request")
    const saved = (await organizationOf(server)).creditsRemaining
    await setCredits(server, 0)
    try {
      expectError(await search(kb, { query: "refund" }, key.secret), 402, "insufficient_credits")
    } finally {
      await setCredits(server, saved)
    }
    expect(await activity(key.id)).toEqual([])
  })

  it("lists at most 20 results of a search while counting all of them", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    for (let i = 0; i < 25; i++) await createPage(server, kb, { title: `Manyresult ${i}`, bodyMarkdown: `manyresultword ${i}` })
    const body = await searched(kb, { query: "manyresultword", kinds: ["pages"], limit: 200 }, key.secret)
    expect(body.results).toHaveLength(25)
    const entry = await newest(key.id)
    expect(entry).toMatchObject({ resultCount: 25 })
    expect(entry!.results).toHaveLength(20)
    expect(entry!.results.map((r) => r.id)).toEqual(body.results.slice(0, 20).map((r: any) => r.id))
  })
})

describe("reads", () => {
  it("records reads of a source, a page and a Knowledgebase's detail, newest first", async () => {
    const kb = await newKnowledgebase("Read me")
    const key = await newKey()
    const src = await readySource(server, kb, { name: "Manual", text: "Read the manual." })
    const folder = await createFolder(server, kb, "Docs")
    const page = await createPage(server, kb, { title: "Guide", bodyMarkdown: "guide", parentPageId: folder })
    expect(await activity(key.id)).toEqual([])

    const tSource = now()
    expect((await server.request("GET", `/knowledgebases/${kb}/sources/${src.id}`, { key: key.secret })).status).toBe(200)
    server.clock.advance(1)
    const tPage = now()
    expect((await server.request("GET", `/knowledgebases/${kb}/pages/${page}`, { key: key.secret })).status).toBe(200)
    server.clock.advance(1)
    const tDetail = now()
    expect((await server.request("GET", `/knowledgebases/${kb}`, { key: key.secret })).status).toBe(200)

    expect(await activity(key.id)).toEqual([
      {
        at: tDetail,
        connectionId: null,
        action: "read_knowledgebase",
        knowledgebaseId: kb,
        queryFingerprint: null,
        kinds: null,
        resultCount: 1,
        results: [{ kind: "knowledgebase", id: kb, title: "Read me 0" }]
      },
      {
        at: tPage,
        connectionId: null,
        action: "read_page",
        knowledgebaseId: kb,
        queryFingerprint: null,
        kinds: null,
        resultCount: 1,
        results: [{ kind: "page", id: page, title: "Guide" }]
      },
      {
        at: tSource,
        connectionId: null,
        action: "read_source",
        knowledgebaseId: kb,
        queryFingerprint: null,
        kinds: null,
        resultCount: 1,
        results: [{ kind: "source", id: src.id, title: "Manual" }]
      }
    ])
  })

  it("lists are not recorded: Knowledgebases, sources, pages, changes", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    await readySource(server, kb, { name: "Listed", text: "listed text" })
    await createPage(server, kb, { title: "Listed page" })
    for (const path of ["/knowledgebases", `/knowledgebases/${kb}/sources`, `/knowledgebases/${kb}/pages`, `/knowledgebases/${kb}/changes`, "/knowledgebases/all/changes"]) {
      expect((await server.request("GET", path, { key: key.secret })).status, path).toBe(200)
    }
    expect(await activity(key.id)).toEqual([])
  })

  it("writes are not recorded as reads", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    const page = await createPage(server, kb, { title: "Written" }, key.secret)
    const folder = await createFolder(server, kb, "Folder")
    expect((await server.request("POST", `/knowledgebases/${kb}/pages/${page}/move`, { body: { parentPageId: folder }, key: key.secret })).status).toBe(200)
    expect(await activity(key.id)).toEqual([])
  })

  it("reads that fail (not found) are not recorded", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    expectError(await server.request("GET", `/knowledgebases/${kb}/sources/${unknownId()}`, { key: key.secret }), 404, "not_found")
    expectError(await server.request("GET", `/knowledgebases/${kb}/pages/${unknownId()}`, { key: key.secret }), 404, "not_found")
    expectError(await server.request("GET", `/knowledgebases/${unknownId()}`, { key: key.secret }), 404, "not_found")
    expect(await activity(key.id)).toEqual([])
  })

  it(`keeps the newest ${activityKept} entries of a key`, async () => {
    const kb = await newKnowledgebase()
    const [key, bystander] = [await newKey(), await newKey()]
    expect((await server.request("GET", `/knowledgebases/${kb}`, { key: bystander.secret })).status).toBe(200)
    for (let i = 0; i < activityKept + 5; i++) {
      if (i % 100 === 99) server.clock.advance(60_000)
      expect((await server.request("GET", `/knowledgebases/${kb}`, { key: key.secret })).status).toBe(200)
    }
    const kept = await activity(key.id)
    expect(kept).toHaveLength(activityKept)
    expect(kept.every((entry) => entry.action === "read_knowledgebase")).toBe(true)
    // Another key's entries are untouched by this key's trimming.
    expect(await activity(bystander.id)).toHaveLength(1)
  })
})

describe("separation", () => {
  it("one key's activity is not visible under another key's id, nor under another organization", async () => {
    const kb = await newKnowledgebase()
    const [a, b] = [await newKey(), await newKey()]
    await searched(kb, { query: "separation", kinds: ["pages"] }, a.secret)
    expect((await server.request("GET", `/knowledgebases/${kb}`, { key: a.secret })).status).toBe(200)
    expect(await activity(a.id)).toHaveLength(2)
    expect(await activity(b.id)).toEqual([])
    await searched(kb, { query: "other", kinds: ["pages"] }, b.secret)
    expect(await activity(b.id)).toHaveLength(1)
    expect(await activity(a.id)).toHaveLength(2)

    // Asked under another organization, a key's activity is empty.
    const otherSecret = await server.createOrganization(`activity-other-${keyCounter}`)
    expect(otherSecret).toEqual(expect.any(String))
    const otherOrg = await organizationId(server, `activity-other-${keyCounter}`)
    expect(await activity(a.id, otherOrg)).toEqual([])
  })

  it("a personal key's activity is recorded under that key", async () => {
    const kb = await newKnowledgebase()
    const email = `activity${++keyCounter}@example.com`
    await server.addMember(email, "viewer")
    const created = await createKeyRecord(server, { name: "personal activity", scopes: ["knowledge:read"], personalFor: email })
    await searched(kb, { query: "personal", kinds: ["pages"] }, created.secret)
    expect(await newest(created.key.id)).toMatchObject({ action: "search", knowledgebaseId: kb, queryFingerprint: expect.stringMatching(fingerprintPattern) })
  })

  it("the bootstrap key's reads do not land in a fresh key's activity", async () => {
    const kb = await newKnowledgebase()
    const key = await newKey()
    expect((await server.request("GET", `/knowledgebases/${kb}`)).status).toBe(200)
    await searched(kb, { query: "bootstrap", kinds: ["pages"] }, server.key)
    expect(await activity(key.id)).toEqual([])
  })
})

describe("batched writes", () => {
  it("entries still waiting when the server stops are written by its shutdown", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-activity-"))
    try {
      const first = await startTestServer({ dataDir })
      const key = await createKeyRecord(first, { name: "shutdown", scopes: ["knowledge:read", "knowledge:write"] })
      const kb = (await first.request("POST", "/knowledgebases", { body: { name: "Stops" } })).body.knowledgebase.id as string
      expect((await first.request("GET", `/knowledgebases/${kb}`, { key: key.secret })).status).toBe(200)
      const org = await organizationId(first)
      await first.stop()
      const again = await startTestServer({ dataDir, key: first.key })
      try {
        const entries = await again.admin(Effect.flatMap(ActivityLog, (log) => log.forKey(org, key.key.id)))
        expect(entries.map((entry) => [entry.action, entry.knowledgebaseId])).toEqual([["read_knowledgebase", kb]])
      } finally {
        await again.stop()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
