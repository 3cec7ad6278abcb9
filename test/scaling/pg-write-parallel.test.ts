/**
 * Writes on PostgreSQL with no lock shared by every write (issue 24): two organizations' writes
 * proceed through different instances while one organization's rows are held by a long
 * transaction, and read-then-write transactions that only the old cluster-wide lock kept apart
 * (appends to one page: its text and its revision numbers) stay exact when sent to three instances
 * at once, each losing transaction run again; the lock a lost transaction's re-run takes alone is
 * its organization's, and holds back no other organization's writes. (pg project only.)
 */
import pg from "pg"
import { describe, expect, it } from "vitest"
import { organizationLockKey } from "../../server/platform/sql/acting-organization.js"
import { contendedLock } from "../../server/platform/sql/pg-serializable.js"
import { instancesOnOneDatabase } from "../support/instances.js"
import type { TestResponse, TestServer } from "../support/server.js"

let database: { readonly url: string }
let instances: Array<TestServer> = []
let db: pg.Client

instancesOnOneDatabase({ requestsPerMinute: 100_000 }, (started) => ({ database, instances, db } = started))

const newKnowledgebase = async (server: TestServer, name: string, key?: string): Promise<string> => {
  const response = await server.request("POST", "/knowledgebases", { body: { name }, ...(key === undefined ? {} : { key }) })
  expect(response.status).toBe(201)
  return response.body.knowledgebase.id as string
}

const newPage = async (server: TestServer, kb: string, title: string): Promise<string> => {
  const response = await server.request("POST", `/knowledgebases/${kb}/pages`, { body: { title, bodyMarkdown: "" } })
  expect(response.status).toBe(201)
  return response.body.page.id as string
}

/** Resolves once some backend waits for a lock (the request sent before it reached the held row). */
const someoneWaitsForALock = async (): Promise<void> => {
  for (;;) {
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted")
    if (rows[0]!.n > 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("writes of different organizations", () => {
  it("proceed through another instance while one organization's page is held by a long transaction; the held write then completes", async () => {
    const a = instances[0]!
    const b = instances[1]!
    const kbA = await newKnowledgebase(a, "Held")
    const pageA = await newPage(a, kbA, "Held page")
    const otherKey = await b.createOrganization("other-org")

    const holder = new pg.Client({ connectionString: database.url })
    await holder.connect()
    let patch: TestResponse | undefined
    try {
      // A transaction of someone else's holds organization A's page, changed and not committed.
      await holder.query("BEGIN")
      await holder.query("UPDATE pages SET description = 'held' WHERE id = $1", [pageA])
      const patched = a.request("PATCH", `/knowledgebases/${kbA}/pages/${pageA}`, { body: { description: "after the hold" } }).then((response) => {
        patch = response
        return response
      })
      await someoneWaitsForALock()

      // Organization B writes through another instance meanwhile: nothing shared holds it back.
      const kbB = await newKnowledgebase(b, "Free", otherKey)
      const pageB = await b.request("POST", `/knowledgebases/${kbB}/pages`, { key: otherKey, body: { title: "Free page", bodyMarkdown: "b" } })
      expect(pageB.status).toBe(201)
      expect(patch).toBeUndefined()
      const { rows } = await db.query<{ description: string }>("SELECT description FROM pages WHERE id = $1", [pageA])
      expect(rows[0]!.description).not.toBe("after the hold")

      await holder.query("COMMIT")
      // The waiting PATCH saw a row changed under it: its transaction is run again, on the committed row.
      const done = await patched
      expect(done.status).toBe(200)
      expect(done.body.page.description).toBe("after the hold")
    } finally {
      await holder.end()
    }
    const { rows } = await db.query<{ description: string }>("SELECT description FROM pages WHERE id = $1", [pageA])
    expect(rows[0]!.description).toBe("after the hold")
  })
})

describe("read-then-write transactions sent to three instances at once", () => {
  it("twelve appends to one page, four through each instance: every text kept once, revisions numbered 1 to 13 with no gap or repeat", async () => {
    const kb = await newKnowledgebase(instances[0]!, "Appends")
    const page = await newPage(instances[0]!, kb, "Busy")
    const texts = Array.from({ length: 12 }, (_, i) => `<${i}>`)
    const responses = await Promise.all(
      texts.map((text, i) => instances[i % 3]!.request("POST", `/knowledgebases/${kb}/pages/${page}/append`, { body: { text } }))
    )
    expect(responses.map((r) => r.status)).toEqual(texts.map(() => 200))
    const { rows } = await db.query<{ body: string }>("SELECT markdown AS body FROM pages WHERE id = $1", [page])
    const markdown = rows[0]!.body
    expect(markdown).toHaveLength(texts.join("").length)
    for (const text of texts) expect(markdown.split(text)).toHaveLength(2)
    const revisions = await db.query<{ number: number }>("SELECT number FROM page_revisions WHERE page_id = $1 ORDER BY number", [page])
    expect(revisions.rows.map((row) => Number(row.number))).toEqual(Array.from({ length: 13 }, (_, i) => i + 1))
  })
})

describe("the lock a lost transaction's re-run takes alone", () => {
  it("is its organization's: held, it keeps that organization's writes waiting on its key while another organization's go through", async () => {
    const a = instances[0]!
    const b = instances[1]!
    const kbA = await newKnowledgebase(a, "Organization A")
    const { rows: owner } = await db.query<{ organization_id: string }>("SELECT organization_id FROM knowledgebases WHERE id = $1", [kbA])
    const key = organizationLockKey(owner[0]!.organization_id)
    const otherKey = await b.createOrganization("organization-b")

    const holder = new pg.Client({ connectionString: database.url })
    await holder.connect()
    let created: TestResponse | undefined
    try {
      // What a re-run of organization A holds while it runs alone.
      await holder.query("BEGIN")
      await holder.query("SELECT pg_advisory_xact_lock($1, $2)", [contendedLock, key])
      const waiting = a.request("POST", "/knowledgebases", { body: { name: "Waits for A's re-run" } }).then((response) => {
        created = response
        return response
      })
      await someoneWaitsForALock()
      const { rows: waits } = await db.query<{ classid: string; objid: string }>(
        "SELECT classid::text, objid::text FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
      )
      expect(waits).toEqual([{ classid: String(contendedLock), objid: String(key >>> 0) }])

      const kbB = await b.request("POST", "/knowledgebases", { key: otherKey, body: { name: "Organization B goes on" } })
      expect(kbB.status).toBe(201)
      const page = await b.request("POST", `/knowledgebases/${kbB.body.knowledgebase.id}/pages`, { key: otherKey, body: { title: "B's page", bodyMarkdown: "b" } })
      expect(page.status).toBe(201)
      expect(created).toBeUndefined()
      const { rows: none } = await db.query("SELECT id FROM knowledgebases WHERE name = $1", ["Waits for A's re-run"])
      expect(none).toEqual([])

      await holder.query("COMMIT")
      expect((await waiting).status).toBe(201)
    } finally {
      await holder.end()
    }
    const { rows: one } = await db.query("SELECT id FROM knowledgebases WHERE name = $1", ["Waits for A's re-run"])
    expect(one).toHaveLength(1)
  })
})
