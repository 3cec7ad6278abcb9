/**
 * Sources straight in the database, for what the API cannot show: the row counts of every table an
 * upload writes (for "nothing written" checks), a source's ingestion job, and sources inserted in
 * bulk for plan-cap tests.
 */
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { organizationId, sql } from "./fixtures.js"
import type { TestServer } from "./server.js"

/** Row counts of every table an upload writes to (the whole database, every organization). */
export const sourceTableCounts = async (server: TestServer) => {
  const rows = await sql(
    server,
    (db) => db<{ t: string; n: number }>`
      SELECT 'sources' AS t, count(*) AS n FROM sources
      UNION ALL SELECT 'attachments', count(*) FROM knowledgebase_sources
      UNION ALL SELECT 'originals', count(*) FROM source_originals
      UNION ALL SELECT 'jobs', count(*) FROM ingestion_jobs
      UNION ALL SELECT 'passages', count(*) FROM passages
      UNION ALL SELECT 'changes', count(*) FROM changes WHERE object_type = 'source'
      UNION ALL SELECT 'sourcesCount', coalesce(sum(sources_count), 0) FROM knowledgebases`
  )
  const count = (name: string) => rows.find((row) => row.t === name)?.n ?? 0
  return {
    sources: count("sources"),
    attachments: count("attachments"),
    originals: count("originals"),
    jobs: count("jobs"),
    passages: count("passages"),
    changes: count("changes"),
    sourcesCount: count("sourcesCount")
  }
}

/** Runs `refuse` and asserts that no table an upload writes to gained or lost a row. */
export const expectNoSourceRows = async (server: TestServer, refuse: () => Promise<void>) => {
  const before = await sourceTableCounts(server)
  await refuse()
  expect(await sourceTableCounts(server)).toEqual(before)
}

/** The ingestion job of a source, straight from the database (null when there is none). */
export const jobOf = async (server: TestServer, sourceId: string) => {
  const rows = await sql(
    server,
    (db) => db<{ source_id: string; state: string; attempts: number; started_at: string | null; deadline_at: string | null }>`
      SELECT * FROM ingestion_jobs WHERE source_id = ${sourceId}`
  )
  return rows[0] ?? null
}

/**
 * Attaches `count` ready sources to a Knowledgebase straight in the database (as uploads would
 * leave them, without passages), keeping its source count right. For plan-cap tests.
 */
export const insertSources = async (server: TestServer, options: { readonly kb: string; readonly count: number; readonly org?: string }) => {
  const orgId = await organizationId(server, options.org ?? "default")
  const at = "2026-01-01T00:00:00.000Z"
  const rows = Array.from({ length: options.count }, (_, i) => ({
    id: randomUUID(),
    organization_id: orgId,
    knowledgebase_id: options.kb,
    name: `Inserted ${i}`,
    type: "txt",
    status: "ready",
    size_bytes: 1,
    content_sha256: null,
    created_via: "api",
    created_at: at,
    updated_at: at
  }))
  for (let i = 0; i < rows.length; i += 500) {
    const batch = rows.slice(i, i + 500)
    await sql(server, (db) => db`INSERT INTO sources ${db.insert(batch)}`)
    await sql(
      server,
      (db) => db`INSERT INTO knowledgebase_sources ${db.insert(batch.map((row) => ({ knowledgebase_id: options.kb, source_id: row.id, attached_at: at })))}`
    )
  }
  await sql(server, (db) => db`UPDATE knowledgebases SET sources_count = sources_count + ${options.count} WHERE id = ${options.kb}`)
  return rows.map((row) => row.id)
}
