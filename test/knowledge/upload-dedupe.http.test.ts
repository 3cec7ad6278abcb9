/**
 * Concurrent identical uploads deduplicate to one source (issue 21), on the test's backend:
 * uploads of the same bytes sent at the same moment over HTTP (JSON and multipart, one or two
 * Knowledgebases, one or two server instances on one database) leave one source, one original,
 * one ingestion job and its passages once, and every answer names that source exactly as a
 * sequential duplicate's answer does. The database holds it by itself (migration 0019's unique
 * index): two transactions inserting the same bytes outside the server's write lock insert one
 * row; and a database that already holds duplicates migrates, the oldest taking the claim.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SourceRow, SourceRepo } from "../../server/knowledge/sources/repo.js"
import { insertKnowledgebases, organizationId, sql } from "../support/fixtures.js"
import { dropTestDatabase, startTestServer, type TestResponse, type TestServer } from "../support/server.js"
import { documentHits, uploadForm, uploadJson, waitForSource } from "../support/sources.js"

const copies = 8
let server: TestServer
let quiet: TestServer
beforeAll(async () => {
  server = await startTestServer({ server: { requestsPerMinute: 1_000_000 } })
  // No worker: a duplicate's answer is `processing` whenever it arrives, and the queued job stays to be counted.
  quiet = await startTestServer({ server: { requestsPerMinute: 1_000_000, ingestionWorker: false } })
})
afterAll(async () => {
  await quiet.stop()
  await server.stop()
})

let counter = 0
const newKnowledgebase = async (on: TestServer): Promise<string> =>
  (await insertKnowledgebases(on, { count: 1, prefix: `Dedupe ${++counter}` }))[0]!.id
const uniqueText = (words: string) => `${words} (${++counter}-${Date.now()})`

/** Everything an upload of these bytes wrote, straight from the database. */
const rowsFor = async (on: TestServer, sha256: string) => {
  const [row] = await sql(on, (db) =>
    db<{ sources: number; originals: number; jobs: number; attachments: number }>`
      SELECT (SELECT count(*) FROM sources WHERE content_sha256 = ${sha256}) AS sources,
        (SELECT count(*) FROM source_originals o JOIN sources s ON s.id = o.source_id WHERE s.content_sha256 = ${sha256}) AS originals,
        (SELECT count(*) FROM ingestion_jobs j JOIN sources s ON s.id = j.source_id WHERE s.content_sha256 = ${sha256}) AS jobs,
        (SELECT count(*) FROM knowledgebase_sources ks JOIN sources s ON s.id = ks.source_id WHERE s.content_sha256 = ${sha256}) AS attachments`
  )
  return { sources: Number(row!.sources), originals: Number(row!.originals), jobs: Number(row!.jobs), attachments: Number(row!.attachments) }
}
const sha256Of = (text: string) => createHash("sha256").update(text).digest("hex")

/** The one answer that created the source, and the others (duplicates). */
const splitAnswers = (answers: ReadonlyArray<TestResponse>) => {
  expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 202))
  const created = answers.filter((answer) => answer.body.deduplicated === false)
  expect(created).toHaveLength(1)
  return { created: created[0]!.body, duplicates: answers.filter((answer) => answer.body.deduplicated === true).map((answer) => answer.body) }
}

const knowledgebaseCounts = async (on: TestServer, kb: string) => {
  const response = await on.request("GET", `/knowledgebases/${kb}`)
  expect(response.status).toBe(200)
  return response.body.knowledgebase.counts
}
const createdChanges = async (on: TestServer, kb: string) => {
  const response = await on.request("GET", `/knowledgebases/${kb}/changes?limit=200`)
  expect(response.status).toBe(200)
  return (response.body.changes as Array<{ change: string; id: string }>).filter((change) => change.change === "created")
}

describe("identical uploads sent at the same moment", () => {
  it(`${copies} JSON uploads to one Knowledgebase: one source, one original, one job; every duplicate answers as a sequential one`, async () => {
    const kb = await newKnowledgebase(quiet)
    const text = uniqueText("The gannet colony is counted every June.")
    const answers = await Promise.all(Array.from({ length: copies }, (_, i) => uploadJson(quiet, kb, { name: `Gannets ${i}`, contentText: text })))
    const { created, duplicates } = splitAnswers(answers)
    expect(created).toMatchObject({ status: "processing", reviewPath: null, source: { status: "processing", type: "txt" } })
    expect(duplicates).toHaveLength(copies - 1)
    for (const duplicate of duplicates) expect(duplicate).toEqual({ ...created, deduplicated: true })

    const sequential = await uploadJson(quiet, kb, { name: "Gannets again", contentText: text })
    expect(sequential.status).toBe(202)
    expect(sequential.body).toEqual(duplicates[0])

    expect(await rowsFor(quiet, sha256Of(text))).toEqual({ sources: 1, originals: 1, jobs: 1, attachments: 1 })
    expect(await knowledgebaseCounts(quiet, kb)).toEqual({ sources: 1, pages: 0 })
    expect((await createdChanges(quiet, kb)).map((change) => change.id)).toEqual([created.source.id])
  })

  it("JSON and multipart copies to two Knowledgebases: one document attached to both, counted once in each", async () => {
    const [a, b] = [await newKnowledgebase(quiet), await newKnowledgebase(quiet)]
    const text = uniqueText("# Kestrels\n\nKestrels hover over the verge.")
    const answers = await Promise.all(
      Array.from({ length: copies }, (_, i) => {
        const kb = i % 2 === 0 ? a : b
        return i % 4 < 2
          ? uploadJson(quiet, kb, { name: `Kestrels ${i}`, contentMarkdown: text })
          : uploadForm(quiet, kb, [{ field: "file", file: { name: `kestrels-${i}.md`, bytes: new TextEncoder().encode(text) } }])
      })
    )
    const { created } = splitAnswers(answers)
    expect(new Set(answers.map((answer) => answer.body.source.id))).toEqual(new Set([created.source.id]))
    expect(new Set(answers.map((answer) => answer.body.source.name))).toEqual(new Set([created.source.name]))
    expect(await rowsFor(quiet, sha256Of(text))).toEqual({ sources: 1, originals: 1, jobs: 1, attachments: 2 })
    expect(await knowledgebaseCounts(quiet, a)).toEqual({ sources: 1, pages: 0 })
    expect(await knowledgebaseCounts(quiet, b)).toEqual({ sources: 1, pages: 0 })
    expect((await createdChanges(quiet, a)).map((change) => change.id)).toEqual([created.source.id])
    expect((await createdChanges(quiet, b)).map((change) => change.id)).toEqual([created.source.id])
  })

  it("indexed once: the passages exist once, search finds one document, and a later duplicate answers it ready", async () => {
    const kb = await newKnowledgebase(server)
    const text = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: the ptarmigan moults to white in ${counter} winters.`).join("\n\n")
    const answers = await Promise.all(Array.from({ length: copies }, () => uploadJson(server, kb, { name: "Ptarmigan", contentText: text })))
    const { created } = splitAnswers(answers)
    for (const answer of answers) expect(answer.body.source.id).toBe(created.source.id)
    const ready = await waitForSource(server, kb, created.source.id)
    expect(ready.status).toBe("ready")

    const [stored] = await sql(server, (db) =>
      db<{ rows: number; numbers: number }>`SELECT count(*) AS rows, count(DISTINCT p.seq) AS numbers FROM passages p
        JOIN sources s ON s.id = p.source_id WHERE s.content_sha256 = ${sha256Of(text)}`
    )
    expect(Number(stored!.rows)).toBeGreaterThan(1)
    expect(Number(stored!.rows)).toBe(Number(stored!.numbers))
    expect(await rowsFor(server, sha256Of(text))).toEqual({ sources: 1, originals: 1, jobs: 0, attachments: 1 })
    const hits = await documentHits(server, kb, "ptarmigan")
    expect(new Set(hits.map((hit) => hit.citation.sourceId))).toEqual(new Set([created.source.id]))

    const later = await uploadJson(server, kb, { name: "Ptarmigan again", contentText: text })
    expect({ status: later.status, body: later.body }).toEqual({
      status: 202,
      body: { status: "ready", source: ready, reviewPath: null, deduplicated: true }
    })
  })

  it("different content sent at the same moment still makes different sources", async () => {
    const kb = await newKnowledgebase(quiet)
    const texts = Array.from({ length: copies }, (_, i) => uniqueText(`Distinct note number ${i} about curlews.`))
    const answers = await Promise.all(texts.map((text, i) => uploadJson(quiet, kb, { name: `Curlews ${i}`, contentText: text })))
    expect(answers.map((answer) => [answer.status, answer.body.deduplicated])).toEqual(texts.map(() => [202, false]))
    expect(new Set(answers.map((answer) => answer.body.source.id)).size).toBe(copies)
    for (const text of texts) expect(await rowsFor(quiet, sha256Of(text))).toEqual({ sources: 1, originals: 1, jobs: 1, attachments: 1 })
    expect(await knowledgebaseCounts(quiet, kb)).toEqual({ sources: copies, pages: 0 })
  })

  it("sent to two server instances on one database: one source", async () => {
    const other = await startTestServer({ dataDir: quiet.dataDir, key: quiet.key, server: { requestsPerMinute: 1_000_000, ingestionWorker: false } })
    try {
      const kb = await newKnowledgebase(quiet)
      const text = uniqueText("Two instances, one dipper nest under the bridge.")
      const answers = await Promise.all(
        Array.from({ length: copies }, (_, i) => uploadJson(i % 2 === 0 ? quiet : other, kb, { name: `Dipper ${i}`, contentText: text }))
      )
      const { created, duplicates } = splitAnswers(answers)
      for (const duplicate of duplicates) expect(duplicate).toEqual({ ...created, deduplicated: true })
      expect(await rowsFor(quiet, sha256Of(text))).toEqual({ sources: 1, originals: 1, jobs: 1, attachments: 1 })
    } finally {
      await other.stop()
    }
  })
})

/** A source row as an upload of `text` to `kb` would insert it, claiming its bytes. */
const claimingRow = (org: string, kb: string, text: string, at: string): SourceRow & { canonical_sha256: string } => ({
  id: randomUUID(),
  organization_id: org,
  knowledgebase_id: kb,
  name: "Direct",
  type: "txt",
  status: "processing",
  disabled: 0,
  url: null,
  size_bytes: Buffer.byteLength(text),
  content_sha256: sha256Of(text),
  canonical_sha256: sha256Of(text),
  error_message: null,
  created_via: "api",
  filed_knowledgebase_id: null,
  parent_page_id: null,
  author: null,
  created_at: at,
  updated_at: at
})

describe("the database keeps one live document per organization and bytes", () => {
  it("two transactions inserting the same bytes without the server's write lock insert one row; the other reads it", async () => {
    const org = await organizationId(quiet)
    const kb = await newKnowledgebase(quiet)
    const text = uniqueText("Racing transactions over a heron.")
    const [first, second] = [claimingRow(org, kb, text, "2026-11-21T12:00:00.000Z"), claimingRow(org, kb, text, "2026-11-21T12:00:00.001Z")]
    const outcomes = await quiet.admin(
      Effect.gen(function* () {
        const db = yield* SqlClient.SqlClient
        const repo = yield* SourceRepo
        // Plain transactions, not `transactionsOn`: no advisory lock. The first holds its row uncommitted for a while.
        const slow = db.withTransaction(Effect.zipLeft(repo.insertOrExisting(first), Effect.sleep("300 millis")))
        const fast = Effect.zipRight(Effect.sleep("50 millis"), db.withTransaction(repo.insertOrExisting(second)))
        return yield* Effect.all([slow, fast], { concurrency: 2 })
      })
    )
    expect(outcomes.map((outcome) => [outcome.inserted, outcome.row.id])).toEqual([
      [true, first.id],
      [false, first.id]
    ])
    expect(await rowsFor(quiet, sha256Of(text))).toEqual({ sources: 1, originals: 0, jobs: 0, attachments: 0 })
  })

  it("a second live row claiming the same bytes is refused; a failed one gives the bytes back; other organizations are apart", async () => {
    const org = await organizationId(quiet)
    const kb = await newKnowledgebase(quiet)
    const text = uniqueText("A claim on a wren.")
    const first = claimingRow(org, kb, text, "2026-11-21T12:00:00.000Z")
    const insertPlain = (row: SourceRow) => sql(quiet, (db) => db`INSERT INTO sources ${db.insert(row as unknown as Record<string, unknown>)}`)
    await insertPlain(first)
    const refused = await sql(quiet, (db) =>
      Effect.flip(db`INSERT INTO sources ${db.insert(claimingRow(org, kb, text, "2026-11-21T12:00:01.000Z") as unknown as Record<string, unknown>)}`)
    )
    // SQLite names the index's columns, PostgreSQL the index.
    expect(String(refused.cause)).toMatch(/UNIQUE constraint failed: sources\.organization_id, sources\.canonical_sha256|"sources_live_content"/)
    // Not claiming (a url source fetched to these bytes, an approved reviewed upload): allowed, as before.
    await insertPlain({ ...claimingRow(org, kb, text, "2026-11-21T12:00:02.000Z"), canonical_sha256: null })

    await sql(quiet, (db) => db`UPDATE sources SET status = 'failed' WHERE id = ${first.id}`)
    const again = claimingRow(org, kb, text, "2026-11-21T12:00:03.000Z")
    await insertPlain(again)

    const slug = `dedupe-other-${Date.now()}`
    await quiet.createOrganization(slug)
    const otherKb = (await insertKnowledgebases(quiet, { org: slug, count: 1, prefix: "Other" }))[0]!.id
    await insertPlain(claimingRow(await organizationId(quiet, slug), otherKb, text, "2026-11-21T12:00:04.000Z"))
    const claims = await sql(quiet, (db) =>
      db<{ id: string }>`SELECT id FROM sources WHERE canonical_sha256 = ${sha256Of(text)} AND status IN ('processing', 'ready') AND organization_id = ${org}`
    )
    expect(claims.map((claim) => claim.id)).toEqual([again.id])
  })
})

describe("migration 0019 on a database that already holds duplicates", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-dedupe-migration-"))
  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true })
    await dropTestDatabase(dataDir)
  })

  it("does not fail: the oldest live copy takes the claim, the others stay as they were, and uploads then attach the oldest", async () => {
    const before = await startTestServer({ dataDir, server: { requestsPerMinute: 1_000_000, ingestionWorker: false } })
    const key = before.key
    const org = await organizationId(before)
    const kb = await newKnowledgebase(before)
    const text = uniqueText("Duplicates from before the index: a stonechat.")
    const rows = [
      { ...claimingRow(org, kb, text, "2026-11-20T10:00:02.000Z"), status: "ready" as const },
      { ...claimingRow(org, kb, text, "2026-11-20T10:00:01.000Z"), status: "ready" as const },
      { ...claimingRow(org, kb, text, "2026-11-20T10:00:00.000Z"), status: "failed" as const },
      { ...claimingRow(org, kb, text, "2026-11-20T10:00:03.000Z"), status: "processing" as const }
    ].map(({ canonical_sha256: _, ...row }) => row)
    // The schema as migration 0018 left it, holding rows a race (or url fetches) could leave (later
    // migrations run again: each is idempotent).
    await sql(before, (db) =>
      Effect.gen(function* () {
        yield* db`DROP INDEX sources_live_content`
        yield* db`ALTER TABLE sources DROP COLUMN canonical_sha256`
        yield* db`DELETE FROM schema_migrations WHERE migration_id >= 19`
        yield* db`INSERT INTO sources ${db.insert(rows as unknown as Array<Record<string, unknown>>)}`
        for (const row of rows) {
          yield* db`INSERT INTO knowledgebase_sources (knowledgebase_id, source_id, attached_at) VALUES (${kb}, ${row.id}, ${row.created_at})`
        }
      })
    )
    await before.stop()

    const after = await startTestServer({ dataDir, key, server: { requestsPerMinute: 1_000_000, ingestionWorker: false } })
    try {
      const claims = await sql(after, (db) =>
        db<{ id: string; canonical_sha256: string | null }>`SELECT id, canonical_sha256 FROM sources WHERE content_sha256 = ${sha256Of(text)} ORDER BY created_at`
      )
      const oldestLive = rows[1]!.id
      expect(claims).toEqual(
        [rows[2]!, rows[1]!, rows[0]!, rows[3]!].map((row) => ({ id: row.id, canonical_sha256: row.id === oldestLive ? sha256Of(text) : null }))
      )
      const answers = await Promise.all(Array.from({ length: 4 }, () => uploadJson(after, kb, { name: "Stonechat", contentText: text })))
      for (const answer of answers) {
        expect({ status: answer.status, deduplicated: answer.body.deduplicated, id: answer.body.source.id }).toEqual({
          status: 202,
          deduplicated: true,
          id: oldestLive
        })
      }
      expect(await rowsFor(after, sha256Of(text))).toMatchObject({ sources: 4, attachments: 4 })
    } finally {
      await after.stop()
    }
  })
})
