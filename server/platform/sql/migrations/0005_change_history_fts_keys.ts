/**
 * Migration 0005: the changes feed keeps every change (one row per change, no longer one per
 * object), and the full-text indexes of pages and memories key on a stable integer (`fts_key`)
 * instead of the implicit rowid that `VACUUM` may renumber.
 *
 * Existing data is kept: the feed's rows keep their sequence numbers (so cursors stay valid) and its
 * high-water mark; every page and memory takes its current rowid as its key, which is what the old
 * indexes were keyed on, and both indexes are rebuilt from their tables.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { dialectOf } from "../dialect.js"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const dialect = dialectOf(sql)

  yield* sql`CREATE TABLE change_history (
    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    knowledgebase_id TEXT NOT NULL REFERENCES knowledgebases(id) ON DELETE CASCADE,
    object_type TEXT NOT NULL CHECK (object_type IN ('page', 'folder', 'source')),
    object_id TEXT NOT NULL,
    change TEXT NOT NULL,
    changed_at TEXT NOT NULL
  ) STRICT`
  if (dialect === "sqlite") {
    yield* sql`INSERT INTO sqlite_sequence (name, seq) SELECT 'change_history', seq FROM sqlite_sequence WHERE name = 'changes'`
  }
  yield* sql`INSERT INTO change_history (sequence, organization_id, knowledgebase_id, object_type, object_id, change, changed_at)
    SELECT sequence, organization_id, knowledgebase_id, object_type, object_id, change, changed_at FROM changes ORDER BY sequence`
  yield* sql`DROP TABLE changes`
  yield* sql`ALTER TABLE change_history RENAME TO changes`
  if (dialect === "pg") {
    yield* sql`SELECT setval(pg_get_serial_sequence('changes', 'sequence'), (SELECT coalesce(max(sequence), 0) + 1 FROM changes), false)`
  }
  yield* sql`CREATE INDEX changes_knowledgebase ON changes (knowledgebase_id, sequence)`
  yield* sql`CREATE INDEX changes_organization ON changes (organization_id, sequence)`

  if (dialect === "pg") {
    // PostgreSQL: the same keys, numbered in creation order, assigned when an insert gives none; the
    // words as stored, weighted tsvector columns with GIN indexes (replacing 0004's FTS5 tables).
    yield* sql`CREATE FUNCTION next_fts_key() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF NEW.fts_key IS NULL THEN
        EXECUTE format('SELECT coalesce(max(fts_key), 0) + 1 FROM %I', TG_TABLE_NAME) INTO NEW.fts_key;
      END IF;
      RETURN NEW;
    END $$`
    for (const table of ["pages", "memories"] as const) {
      yield* sql`ALTER TABLE ${sql(table)} ADD COLUMN fts_key INTEGER`
      yield* sql`UPDATE ${sql(table)} SET fts_key = numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM ${sql(table)}) AS numbered
        WHERE ${sql(table)}.id = numbered.id`
      yield* sql`CREATE UNIQUE INDEX ${sql(`${table}_fts_key`)} ON ${sql(table)} (fts_key)`
      yield* sql`CREATE TRIGGER ${sql(`${table}_fts_key`)} BEFORE INSERT ON ${sql(table)} FOR EACH ROW EXECUTE FUNCTION next_fts_key()`
    }
    yield* sql`ALTER TABLE pages ADD COLUMN search tsvector GENERATED ALWAYS AS
      (setweight(to_tsvector('svc_english', title), 'A') || setweight(to_tsvector('svc_english', markdown), 'B')) STORED`
    yield* sql`CREATE INDEX pages_search ON pages USING GIN (search)`
    yield* sql`ALTER TABLE memories ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('svc_english', text)) STORED`
    yield* sql`CREATE INDEX memories_search ON memories USING GIN (search)`
    return
  }

  yield* sql`DROP TRIGGER pages_fts_insert`
  yield* sql`DROP TRIGGER pages_fts_update`
  yield* sql`DROP TRIGGER pages_fts_delete`
  yield* sql`DROP TABLE pages_fts`
  yield* sql`ALTER TABLE pages ADD COLUMN fts_key INTEGER`
  yield* sql`UPDATE pages SET fts_key = rowid`
  yield* sql`CREATE UNIQUE INDEX pages_fts_key ON pages (fts_key)`
  yield* sql`CREATE VIRTUAL TABLE pages_fts USING fts5(title, markdown, content='pages', content_rowid='fts_key', tokenize='porter unicode61')`
  // A row inserted without a key (the repository always gives one) takes the next free key.
  yield* sql`CREATE TRIGGER pages_fts_key AFTER INSERT ON pages WHEN new.fts_key IS NULL BEGIN
    UPDATE pages SET fts_key = (SELECT coalesce(max(fts_key), 0) + 1 FROM pages) WHERE rowid = new.rowid;
  END`
  yield* sql`CREATE TRIGGER pages_fts_insert AFTER INSERT ON pages WHEN new.fts_key IS NOT NULL BEGIN
    INSERT INTO pages_fts (rowid, title, markdown) VALUES (new.fts_key, new.title, new.markdown);
  END`
  yield* sql`CREATE TRIGGER pages_fts_update AFTER UPDATE OF fts_key, title, markdown ON pages BEGIN
    INSERT INTO pages_fts (pages_fts, rowid, title, markdown)
      SELECT 'delete', old.fts_key, old.title, old.markdown WHERE old.fts_key IS NOT NULL;
    INSERT INTO pages_fts (rowid, title, markdown) SELECT new.fts_key, new.title, new.markdown WHERE new.fts_key IS NOT NULL;
  END`
  yield* sql`CREATE TRIGGER pages_fts_delete AFTER DELETE ON pages WHEN old.fts_key IS NOT NULL BEGIN
    INSERT INTO pages_fts (pages_fts, rowid, title, markdown) VALUES ('delete', old.fts_key, old.title, old.markdown);
  END`
  yield* sql`INSERT INTO pages_fts (pages_fts) VALUES ('rebuild')`

  yield* sql`DROP TRIGGER memories_fts_insert`
  yield* sql`DROP TRIGGER memories_fts_update`
  yield* sql`DROP TRIGGER memories_fts_delete`
  yield* sql`DROP TABLE memories_fts`
  yield* sql`ALTER TABLE memories ADD COLUMN fts_key INTEGER`
  yield* sql`UPDATE memories SET fts_key = rowid`
  yield* sql`CREATE UNIQUE INDEX memories_fts_key ON memories (fts_key)`
  yield* sql`CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='fts_key', tokenize='porter unicode61')`
  yield* sql`CREATE TRIGGER memories_fts_key AFTER INSERT ON memories WHEN new.fts_key IS NULL BEGIN
    UPDATE memories SET fts_key = (SELECT coalesce(max(fts_key), 0) + 1 FROM memories) WHERE rowid = new.rowid;
  END`
  yield* sql`CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories WHEN new.fts_key IS NOT NULL BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.fts_key, new.text);
  END`
  yield* sql`CREATE TRIGGER memories_fts_update AFTER UPDATE OF fts_key, text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) SELECT 'delete', old.fts_key, old.text WHERE old.fts_key IS NOT NULL;
    INSERT INTO memories_fts (rowid, text) SELECT new.fts_key, new.text WHERE new.fts_key IS NOT NULL;
  END`
  yield* sql`CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories WHEN old.fts_key IS NOT NULL BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.fts_key, old.text);
  END`
  yield* sql`INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')`
})
