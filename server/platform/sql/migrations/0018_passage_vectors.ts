/**
 * Migration 0018: vectors of indexed passages for hybrid search (`server/knowledge/embeddings/`).
 * One row per passage: the embedding model that made it, its dimensions and the vector as unit-length
 * little-endian float32 bytes (BLOB on SQLite, BYTEA on PostgreSQL). A passage's vector goes with it
 * (re-indexing a source replaces its passages, and so drops their vectors); passages of another
 * model's vector, or none, are embedded again by the embedding worker.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE passage_vectors (
    passage_id INTEGER NOT NULL PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL,
    vector BLOB NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX passage_vectors_organization ON passage_vectors (organization_id, model)`
})
