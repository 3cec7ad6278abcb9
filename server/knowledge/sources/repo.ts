/**
 * SQL for sources: the documents, the Knowledgebases they are attached to, their kept originals,
 * ingestion jobs and indexed passages. Reads outside a transaction use the read connection;
 * everything a write decides on is read again inside it.
 */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import type { Chunk } from "./chunk.js"
import type { Source } from "../knowledgebases/domain.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const ingestionJobsWrites = declareWrites("ingestion_jobs")
const knowledgebaseSourcesWrites = declareWrites("knowledgebase_sources")
const knowledgebasesWrites = declareWrites("knowledgebases")
const passagesWrites = declareWrites("passages")
const sourceOriginalsWrites = declareWrites("source_originals")
const sourcesWrites = declareWrites("sources")

/** A source row as stored. */
export interface SourceRow {
  readonly id: string
  readonly organization_id: string
  readonly knowledgebase_id: string
  readonly name: string
  readonly type: string
  readonly status: Source["status"]
  readonly disabled: number
  readonly url: string | null
  readonly size_bytes: number
  readonly content_sha256: string | null
  /**
   * The bytes this source is the organization's one live document of (migration 0019): set on
   * uploads that deduplicate; unique per organization among `processing` and `ready` sources.
   */
  readonly canonical_sha256: string | null
  readonly error_message: string | null
  readonly created_via: "api" | "mcp"
  readonly filed_knowledgebase_id: string | null
  readonly parent_page_id: string | null
  readonly author: string | null
  readonly created_at: string
  readonly updated_at: string
}

/** A source row with when it joined the Knowledgebase it is read through. */
export interface AttachedSourceRow extends SourceRow {
  readonly attached_at: string
}

/** An ingestion job as stored. */
export interface JobRow {
  readonly source_id: string
  readonly state: "queued" | "running"
  readonly attempts: number
  readonly queued_at: string
  readonly started_at: string | null
  readonly deadline_at: string | null
  /** The instance running it (`InstanceRegistry`); null while queued. */
  readonly claimed_by: string | null
}

/**
 * A source as seen from one Knowledgebase: its filing (`parentPageId`) shows only in the
 * Knowledgebase it is filed in, since a document lives in one place across the organization.
 */
export const toSource = (row: SourceRow, knowledgebaseId: string): Source => ({
  id: row.id,
  name: row.name,
  type: row.type,
  status: row.status,
  searchable: row.status === "ready" && row.disabled === 0,
  disabled: row.disabled !== 0,
  url: row.url,
  updatedAt: row.updated_at,
  createdAt: row.created_at,
  sizeBytes: row.size_bytes,
  errorMessage: row.error_message,
  createdVia: row.created_via,
  parentPageId: row.filed_knowledgebase_id === knowledgebaseId ? row.parent_page_id : null
})

const attachedColumns = "s.*, ks.attached_at"
const passageBatch = 200
const batches = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))

/** Sources in SQL. */
export class SourceRepo extends Effect.Service<SourceRepo>()("svc/SourceRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const orDie = Effect.orDie
    return {
      /** How many sources the organization has, in all its Knowledgebases. */
      count: (organizationId: string) => organizationRowCount(sql, "sources", organizationId),
      /** A source attached to the Knowledgebase (read connection). */
      find: (knowledgebaseId: string, sourceId: string) =>
        orDie(
          reader
            .all<AttachedSourceRow>(
              `SELECT ${attachedColumns} FROM knowledgebase_sources ks JOIN sources s ON s.id = ks.source_id
               WHERE ks.knowledgebase_id = ? AND ks.source_id = ?`,
              [knowledgebaseId, sourceId]
            )
            .pipe(Effect.map((rows) => rows[0] ?? null))
        ),
      /** A source attached to the Knowledgebase, read inside a write. */
      findForUpdate: (knowledgebaseId: string, sourceId: string) =>
        orDie(
          sql<AttachedSourceRow>`SELECT ${sql.literal(attachedColumns)} FROM knowledgebase_sources ks JOIN sources s ON s.id = ks.source_id
            WHERE ks.knowledgebase_id = ${knowledgebaseId} AND ks.source_id = ${sourceId}`.pipe(Effect.map((rows) => rows[0] ?? null))
        ),
      /** A source of the organization by id, inside a write. */
      byIdForUpdate: (organizationId: string, sourceId: string) =>
        orDie(
          sql<SourceRow>`SELECT * FROM sources WHERE organization_id = ${organizationId} AND id = ${sourceId}`.pipe(
            Effect.map((rows) => rows[0] ?? null)
          )
        ),
      /** A source by id alone (the worker's reads, inside a write). */
      byIdUnscoped: (sourceId: string) =>
        orDie(sql<SourceRow>`SELECT * FROM sources WHERE id = ${sourceId}`.pipe(Effect.map((rows) => rows[0] ?? null))),
      /** A live document of the organization with exactly these bytes, if any (inside a write). */
      byContent: (organizationId: string, sha256: string) =>
        orDie(
          sql<SourceRow>`SELECT * FROM sources WHERE organization_id = ${organizationId} AND content_sha256 = ${sha256}
            AND status IN ('processing', 'ready') ORDER BY created_at LIMIT 1`.pipe(Effect.map((rows) => rows[0] ?? null))
        ),
      /** How many sources are attached to the Knowledgebase (inside a write). */
      countAttached: (knowledgebaseId: string) =>
        orDie(
          sql<{ n: number }>`SELECT count(*) AS n FROM knowledgebase_sources WHERE knowledgebase_id = ${knowledgebaseId}`.pipe(
            Effect.map((rows) => rows[0]?.n ?? 0)
          )
        ),
      /** Up to `limit + 1` sources of the Knowledgebase after the page position, oldest attachment first. */
      list: (knowledgebaseId: string, page: PageRequest, updatedSince: string | null) =>
        orDie(
          reader.all<AttachedSourceRow>(
            `SELECT ${attachedColumns} FROM knowledgebase_sources ks JOIN sources s ON s.id = ks.source_id
             WHERE ks.knowledgebase_id = ? AND (CASE WHEN s.updated_at > ks.attached_at THEN s.updated_at ELSE ks.attached_at END) >= ? ${page.after === null ? "" : "AND (ks.attached_at, ks.source_id) > (?, ?)"}
             ORDER BY ks.attached_at, ks.source_id LIMIT ?`,
            [
              knowledgebaseId,
              updatedSince ?? "",
              ...(page.after === null ? [] : [page.after[0] ?? "", page.after[1] ?? ""]),
              page.limit + 1
            ]
          )
        ),
      /** Every source of the Knowledgebase, oldest attachment first (detail read and export). */
      all: (knowledgebaseId: string) =>
        orDie(
          reader.all<AttachedSourceRow>(
            `SELECT ${attachedColumns} FROM knowledgebase_sources ks JOIN sources s ON s.id = ks.source_id
             WHERE ks.knowledgebase_id = ? ORDER BY ks.attached_at, ks.source_id`,
            [knowledgebaseId]
          )
        ),
      /** The Knowledgebases a source is attached to (inside a write). */
      attachments: (sourceId: string) =>
        orDie(
          sql<{ knowledgebase_id: string }>`SELECT knowledgebase_id FROM knowledgebase_sources WHERE source_id = ${sourceId}`.pipe(
            Effect.map((rows) => rows.map((row) => row.knowledgebase_id))
          )
        ),
      insert: (row: SourceRow) => orDie(sql`INSERT INTO sources ${sql.insert(row as unknown as Record<string, unknown>)}`.pipe(writing(sourcesWrites))),
      /**
       * Inserts a source that claims its bytes (`canonical_sha256` set), unless another live source
       * of the organization holds that claim: then nothing is written and that source is answered.
       * The unique index of migration 0019 decides, so two uploads racing on separate connections
       * or instances insert one row; the loser waits for the winner's commit (PostgreSQL) and reads it.
       */
      insertOrExisting: (row: SourceRow & { readonly canonical_sha256: string }) =>
        orDie(
          Effect.gen(function* () {
            const inserted = yield* sql<{ id: string }>`INSERT INTO sources ${sql.insert(row as unknown as Record<string, unknown>)}
              ON CONFLICT (organization_id, canonical_sha256) WHERE canonical_sha256 IS NOT NULL AND status IN ('processing', 'ready')
              DO NOTHING RETURNING id`.pipe(writing(sourcesWrites))
            if (inserted.length === 1) return { inserted: true as const, row }
            const holders = yield* sql<SourceRow>`SELECT * FROM sources WHERE organization_id = ${row.organization_id}
              AND canonical_sha256 = ${row.canonical_sha256} AND status IN ('processing', 'ready')`
            const holder = holders[0]
            if (!holder) return yield* Effect.dieMessage(`source insert for ${row.canonical_sha256} conflicted with no live source`)
            return { inserted: false as const, row: holder }
          })
        ),
      attach: (knowledgebaseId: string, sourceId: string, at: string) =>
        orDie(sql`INSERT INTO knowledgebase_sources (knowledgebase_id, source_id, attached_at) VALUES (${knowledgebaseId}, ${sourceId}, ${at})`.pipe(writing(knowledgebaseSourcesWrites))),
      /** Marks the Knowledgebase changed, adding `delta` to its source count. */
      touchKnowledgebase: (knowledgebaseId: string, delta: number, at: string) =>
        orDie(sql`UPDATE knowledgebases SET sources_count = sources_count + ${delta}, updated_at = ${at} WHERE id = ${knowledgebaseId}`.pipe(writing(knowledgebasesWrites))),
      keepOriginal: (sourceId: string, contentType: string, bytes: Uint8Array) =>
        orDie(sql`INSERT INTO source_originals (source_id, content_type, bytes) VALUES (${sourceId}, ${contentType}, ${bytes})
          ON CONFLICT (source_id) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes`.pipe(writing(sourceOriginalsWrites))),
      /** The kept original of a source (read connection). */
      original: (sourceId: string) =>
        orDie(
          reader
            .all<{ content_type: string; bytes: Uint8Array }>("SELECT content_type, bytes FROM source_originals WHERE source_id = ?", [sourceId])
            .pipe(Effect.map((rows) => rows[0] ?? null))
        ),
      setStatus: (sourceId: string, change: { status: Source["status"]; errorMessage: string | null; at: string }) =>
        orDie(sql`UPDATE sources SET status = ${change.status}, error_message = ${change.errorMessage}, updated_at = ${change.at}
          WHERE id = ${sourceId}`.pipe(writing(sourcesWrites))),
      setFetched: (sourceId: string, change: { type: string; sizeBytes: number; sha256: string }) =>
        orDie(sql`UPDATE sources SET type = ${change.type}, size_bytes = ${change.sizeBytes}, content_sha256 = ${change.sha256} WHERE id = ${sourceId}`.pipe(writing(sourcesWrites))),
      file: (sourceId: string, filing: { knowledgebaseId: string | null; parentPageId: string | null; at: string }) =>
        orDie(sql`UPDATE sources SET filed_knowledgebase_id = ${filing.knowledgebaseId}, parent_page_id = ${filing.parentPageId},
          updated_at = ${filing.at} WHERE id = ${sourceId}`.pipe(writing(sourcesWrites))),
      remove: (sourceId: string) => orDie(sql`DELETE FROM sources WHERE id = ${sourceId}`.pipe(writing(sourcesWrites))),
      /** Uploads of the organization waiting for review, oldest first. */
      pending: (organizationId: string) =>
        orDie(
          sql<SourceRow>`SELECT * FROM sources WHERE organization_id = ${organizationId} AND status = 'pending_review'
            ORDER BY created_at, rowid`
        ),

      enqueue: (sourceId: string, at: string) =>
        orDie(sql`INSERT INTO ingestion_jobs (source_id, state, attempts, queued_at) VALUES (${sourceId}, 'queued', 0, ${at})
          ON CONFLICT (source_id) DO UPDATE SET state = 'queued', attempts = 0, queued_at = excluded.queued_at, started_at = NULL, deadline_at = NULL,
            claimed_by = NULL`.pipe(writing(ingestionJobsWrites))),
      /** Claims the oldest queued job for instance `claimant`: it becomes `running` until `deadline`. */
      claimJob: (at: string, deadline: string, claimant: string) =>
        orDie(
          Effect.gen(function* () {
            const rows = yield* sql<JobRow>`SELECT * FROM ingestion_jobs WHERE state = 'queued' ORDER BY queued_at, source_id LIMIT 1`
            const job = rows[0]
            if (!job) return null
            yield* sql`UPDATE ingestion_jobs SET state = 'running', attempts = attempts + 1, started_at = ${at}, deadline_at = ${deadline},
              claimed_by = ${claimant} WHERE source_id = ${job.source_id}`.pipe(writing(ingestionJobsWrites))
            return { ...job, state: "running" as const, attempts: job.attempts + 1, started_at: at, deadline_at: deadline, claimed_by: claimant }
          })
        ),
      /** Jobs `running` whose claim `claim` selects (an `InstanceRegistry` condition): left by a process that stopped. */
      runningJobs: (claim: Fragment) => orDie(sql<JobRow>`SELECT * FROM ingestion_jobs WHERE state = 'running' AND ${claim}`),
      /**
       * Takes over a running job left by `job.claimed_by` for instance `claimant` (still running,
       * attempts unchanged); false when another instance took it first or it moved on.
       */
      takeOverJob: (job: JobRow, claimant: string) =>
        orDie(
          sql<{ source_id: string }>`UPDATE ingestion_jobs SET claimed_by = ${claimant}
            WHERE source_id = ${job.source_id} AND state = 'running' AND attempts = ${job.attempts}
              AND ${job.claimed_by === null ? sql`claimed_by IS NULL` : sql`claimed_by = ${job.claimed_by}`} RETURNING source_id`.pipe(writing(ingestionJobsWrites))
        ).pipe(Effect.map((rows) => rows.length === 1)),
      job: (sourceId: string) =>
        orDie(
          reader.all<JobRow>("SELECT * FROM ingestion_jobs WHERE source_id = ?", [sourceId]).pipe(Effect.map((rows) => rows[0] ?? null))
        ),
      jobForUpdate: (sourceId: string) =>
        orDie(sql<JobRow>`SELECT * FROM ingestion_jobs WHERE source_id = ${sourceId}`.pipe(Effect.map((rows) => rows[0] ?? null))),
      requeue: (sourceId: string, at: string) =>
        orDie(
          sql`UPDATE ingestion_jobs SET state = 'queued', queued_at = ${at}, started_at = NULL, deadline_at = NULL, claimed_by = NULL
            WHERE source_id = ${sourceId}`.pipe(writing(ingestionJobsWrites))
        ),
      finishJob: (sourceId: string) => orDie(sql`DELETE FROM ingestion_jobs WHERE source_id = ${sourceId}`.pipe(writing(ingestionJobsWrites))),
      /** Replaces the source's passages with `chunks` (the full-text index follows by trigger). */
      replacePassages: (sourceId: string, scope: string, chunks: ReadonlyArray<Chunk>) =>
        orDie(
          Effect.zipRight(
            sql`DELETE FROM passages WHERE source_id = ${sourceId}`.pipe(writing(passagesWrites)),
            Effect.forEach(
              batches(chunks, passageBatch),
              (batch) =>
                sql`INSERT INTO passages ${sql.insert(
                  batch.map((chunk) => ({
                    source_id: sourceId,
                    seq: chunk.index,
                    section: chunk.section,
                    start_offset: chunk.start,
                    end_offset: chunk.end,
                    scope,
                    text: chunk.text
                  }))
                )}`.pipe(writing(passagesWrites)),
              { discard: true }
            )
          )
        ),
      /** Re-scopes a document's passages after it joined another Knowledgebase (the index follows by trigger). */
      rescopePassages: (sourceId: string, scope: string) =>
        orDie(sql`UPDATE passages SET scope = ${scope} WHERE source_id = ${sourceId} AND scope != ${scope}`.pipe(writing(passagesWrites)))
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
