/**
 * Migration 0003: pages and folders of Knowledgebases (the body is the last column, so reading a
 * page's metadata never walks through its body's overflow pages), their revision history (applied, pending
 * review, rejected), the links between pages, and the changes feed (one row per changed object).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE pages (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    knowledgebase_id TEXT NOT NULL REFERENCES knowledgebases(id) ON DELETE CASCADE,
    parent_page_id TEXT REFERENCES pages(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    template_key TEXT NOT NULL,
    hook TEXT NOT NULL DEFAULT '',
    revision INTEGER NOT NULL DEFAULT 1,
    author TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    markdown TEXT NOT NULL DEFAULT ''
  ) STRICT`
  // Covers the tree listing's columns, so building the page index never reads the rows themselves.
  yield* sql`CREATE INDEX pages_tree ON pages
    (knowledgebase_id, parent_page_id, created_at, id, title, template_key, updated_at, hook, description)`
  yield* sql`CREATE TABLE page_revisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    knowledgebase_id TEXT NOT NULL REFERENCES knowledgebases(id) ON DELETE CASCADE,
    page_id TEXT NOT NULL,
    number INTEGER,
    kind TEXT NOT NULL CHECK (kind IN ('create', 'edit', 'append')),
    status TEXT NOT NULL CHECK (status IN ('applied', 'pending_review', 'rejected')),
    operation TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    author TEXT,
    created_at TEXT NOT NULL,
    reviewed_at TEXT,
    markdown TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX page_revisions_page ON page_revisions (page_id, seq)`
  yield* sql`CREATE INDEX page_revisions_pending ON page_revisions (organization_id, seq) WHERE status = 'pending_review'`
  yield* sql`CREATE TABLE page_links (
    page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
    target_page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
    PRIMARY KEY (page_id, target_page_id)
  ) STRICT`
  yield* sql`CREATE INDEX page_links_target ON page_links (target_page_id)`
  yield* sql`CREATE TABLE changes (
    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    knowledgebase_id TEXT NOT NULL REFERENCES knowledgebases(id) ON DELETE CASCADE,
    object_type TEXT NOT NULL CHECK (object_type IN ('page', 'folder', 'source')),
    object_id TEXT NOT NULL,
    change TEXT NOT NULL,
    changed_at TEXT NOT NULL,
    UNIQUE (knowledgebase_id, object_id)
  ) STRICT`
  yield* sql`CREATE INDEX changes_knowledgebase ON changes (knowledgebase_id, sequence)`
  yield* sql`CREATE INDEX changes_organization ON changes (organization_id, sequence)`
})
