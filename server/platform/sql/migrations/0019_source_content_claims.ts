/**
 * Migration 0019: one live document per organization and bytes, held by the database (issue 21).
 * An upload of bytes the organization already holds as a live document (`processing` or `ready`)
 * attaches that document; until now only the application's check-then-insert kept two identical
 * uploads from both inserting, which holds only while every write transaction is serialized.
 *
 * `sources.canonical_sha256` is the SHA-256 of the bytes a source is the organization's document
 * of: set on every upload that deduplicates (bytes known at upload, no review), and here on the
 * oldest live source of each organization and bytes. A partial unique index allows one live
 * source per (organization, canonical_sha256); an upload inserts `ON CONFLICT DO NOTHING` and, when
 * another upload of the same bytes won, attaches that one instead (`SourceRepo.insertOrExisting`).
 * A source that fails leaves the index (its bytes may be uploaded again), as the dedupe check
 * always ignored failed sources.
 *
 * Existing databases may already hold several live sources with the same bytes (uploads of a
 * `url`, whose bytes are known only after the fetch, approved uploads under review, or a race
 * before this index): only the oldest (by `created_at`, then id) takes the claim, the others keep
 * `canonical_sha256` null and stay as they are (readable, searchable, their ids valid), so this
 * migration never fails on them and deletes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sources ADD COLUMN canonical_sha256 TEXT`
  yield* sql`UPDATE sources SET canonical_sha256 = content_sha256
    WHERE content_sha256 IS NOT NULL AND status IN ('processing', 'ready')
      AND NOT EXISTS (
        SELECT 1 FROM sources older
        WHERE older.organization_id = sources.organization_id AND older.content_sha256 = sources.content_sha256
          AND older.status IN ('processing', 'ready')
          AND (older.created_at < sources.created_at OR (older.created_at = sources.created_at AND older.id < sources.id))
      )`
  yield* sql`CREATE UNIQUE INDEX sources_live_content ON sources (organization_id, canonical_sha256)
    WHERE canonical_sha256 IS NOT NULL AND status IN ('processing', 'ready')`
})
