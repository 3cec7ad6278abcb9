/**
 * Migration 0004: sources (documents) and the Knowledgebases they are attached to, their kept
 * originals, ingestion jobs, indexed passages (FTS5, with scope tokens and a passage count for
 * ranking decisions), full-text indexes of pages and memories,
 * members' memories, and each key's recent Knowledgebase activity.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { dialectOf } from "../dialect.js"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    knowledgebase_id TEXT NOT NULL REFERENCES knowledgebases(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('processing', 'ready', 'failed', 'pending_review')),
    disabled INTEGER NOT NULL DEFAULT 0,
    url TEXT,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    content_sha256 TEXT,
    error_message TEXT,
    created_via TEXT NOT NULL CHECK (created_via IN ('api', 'mcp')),
    filed_knowledgebase_id TEXT REFERENCES knowledgebases(id) ON DELETE SET NULL,
    parent_page_id TEXT REFERENCES pages(id) ON DELETE SET NULL,
    author TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX sources_content ON sources (organization_id, content_sha256) WHERE content_sha256 IS NOT NULL`
  yield* sql`CREATE INDEX sources_parent ON sources (parent_page_id) WHERE parent_page_id IS NOT NULL`
  yield* sql`CREATE INDEX sources_pending ON sources (organization_id, created_at) WHERE status = 'pending_review'`
  yield* sql`CREATE TABLE knowledgebase_sources (
    knowledgebase_id TEXT NOT NULL REFERENCES knowledgebases(id) ON DELETE CASCADE,
    source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    attached_at TEXT NOT NULL,
    PRIMARY KEY (knowledgebase_id, source_id)
  ) STRICT, WITHOUT ROWID`
  yield* sql`CREATE INDEX knowledgebase_sources_source ON knowledgebase_sources (source_id)`
  yield* sql`CREATE INDEX knowledgebase_sources_listing ON knowledgebase_sources (knowledgebase_id, attached_at, source_id)`
  yield* sql`CREATE TABLE source_originals (
    source_id TEXT PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
    content_type TEXT NOT NULL,
    bytes BLOB NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE ingestion_jobs (
    source_id TEXT PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running')),
    attempts INTEGER NOT NULL DEFAULT 0,
    queued_at TEXT NOT NULL,
    started_at TEXT,
    deadline_at TEXT
  ) STRICT`
  yield* sql`CREATE INDEX ingestion_jobs_queue ON ingestion_jobs (state, queued_at)`
  yield* sql`CREATE TABLE passages (
    id INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    section TEXT,
    start_offset INTEGER NOT NULL,
    end_offset INTEGER NOT NULL,
    scope TEXT NOT NULL,
    text TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX passages_source ON passages (source_id, seq)`
  yield* sql`CREATE TABLE search_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT`
  yield* sql`INSERT INTO search_counters (name, value) VALUES ('passages', 0)`
  // \`scope\` holds one token for the organization and one per Knowledgebase the document is attached
  // to, so a search narrows to its scope inside the index instead of joining every match.
  if (dialectOf(sql) === "pg") {
    // PostgreSQL: the words and scope tokens as stored tsvector columns with GIN indexes, and the
    // passage count kept by a row trigger. (Pages and memories get theirs in 0005.) Sources get the
    // insertion order SQLite's rowid gives them (a tie-break of listings).
    yield* sql`ALTER TABLE sources ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY`
    // English stemming without a stop-word list, as FTS5's \`porter unicode61\` indexes every word.
    yield* sql`CREATE TEXT SEARCH DICTIONARY svc_stem (TEMPLATE = snowball, Language = english)`
    yield* sql`CREATE TEXT SEARCH CONFIGURATION svc_english (COPY = english)`
    yield* sql`ALTER TEXT SEARCH CONFIGURATION svc_english
      ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH svc_stem`
    yield* sql`ALTER TABLE passages ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('svc_english', text)) STORED`
    yield* sql`ALTER TABLE passages ADD COLUMN scope_search tsvector GENERATED ALWAYS AS (to_tsvector('simple', scope)) STORED`
    yield* sql`CREATE INDEX passages_search ON passages USING GIN (search)`
    yield* sql`CREATE INDEX passages_scope_search ON passages USING GIN (scope_search)`
    yield* sql`CREATE FUNCTION passages_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      UPDATE search_counters SET value = value + (CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END) WHERE name = 'passages';
      RETURN NULL;
    END $$`
    yield* sql`CREATE TRIGGER passages_count AFTER INSERT OR DELETE ON passages FOR EACH ROW EXECUTE FUNCTION passages_count()`
  } else {
    yield* sql`CREATE VIRTUAL TABLE passages_fts USING fts5(text, scope, content='passages', content_rowid='id', tokenize='porter unicode61')`
    yield* sql`CREATE VIRTUAL TABLE passages_vocab USING fts5vocab(passages_fts, 'row')`
    yield* sql`CREATE TRIGGER passages_fts_insert AFTER INSERT ON passages BEGIN
      INSERT INTO passages_fts (rowid, text, scope) VALUES (new.id, new.text, new.scope);
      UPDATE search_counters SET value = value + 1 WHERE name = 'passages';
    END`
    yield* sql`CREATE TRIGGER passages_fts_update AFTER UPDATE OF text, scope ON passages BEGIN
      INSERT INTO passages_fts (passages_fts, rowid, text, scope) VALUES ('delete', old.id, old.text, old.scope);
      INSERT INTO passages_fts (rowid, text, scope) VALUES (new.id, new.text, new.scope);
    END`
    yield* sql`CREATE TRIGGER passages_fts_delete AFTER DELETE ON passages BEGIN
      INSERT INTO passages_fts (passages_fts, rowid, text, scope) VALUES ('delete', old.id, old.text, old.scope);
      UPDATE search_counters SET value = value - 1 WHERE name = 'passages';
    END`
    yield* sql`CREATE VIRTUAL TABLE pages_fts USING fts5(title, markdown, content='pages', content_rowid='rowid', tokenize='porter unicode61')`
    yield* sql`CREATE TRIGGER pages_fts_insert AFTER INSERT ON pages BEGIN
      INSERT INTO pages_fts (rowid, title, markdown) VALUES (new.rowid, new.title, new.markdown);
    END`
    yield* sql`CREATE TRIGGER pages_fts_update AFTER UPDATE OF title, markdown ON pages BEGIN
      INSERT INTO pages_fts (pages_fts, rowid, title, markdown) VALUES ('delete', old.rowid, old.title, old.markdown);
      INSERT INTO pages_fts (rowid, title, markdown) VALUES (new.rowid, new.title, new.markdown);
    END`
    yield* sql`CREATE TRIGGER pages_fts_delete AFTER DELETE ON pages BEGIN
      INSERT INTO pages_fts (pages_fts, rowid, title, markdown) VALUES ('delete', old.rowid, old.title, old.markdown);
    END`
    yield* sql`INSERT INTO pages_fts (pages_fts) VALUES ('rebuild')`
  }
  yield* sql`CREATE TABLE memories (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    member_id TEXT NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX memories_member ON memories (member_id, created_at)`
  if (dialectOf(sql) === "sqlite") {
    yield* sql`CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='rowid', tokenize='porter unicode61')`
    yield* sql`CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
      INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
    END`
    yield* sql`CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
      INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
      INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
    END`
    yield* sql`CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
      INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    END`
  }
  yield* sql`CREATE TABLE knowledge_activity (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    key_id TEXT REFERENCES api_keys(id) ON DELETE CASCADE,
    connection_id TEXT,
    action TEXT NOT NULL,
    knowledgebase_id TEXT,
    query_fingerprint TEXT,
    detail TEXT NOT NULL,
    at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX knowledge_activity_key ON knowledge_activity (key_id, seq)`
  yield* sql`CREATE INDEX knowledge_activity_connection ON knowledge_activity (connection_id, seq) WHERE connection_id IS NOT NULL`
})
