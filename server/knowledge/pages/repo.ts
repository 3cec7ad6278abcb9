/**
 * SQL for pages, folders, their revisions and links, and the sources filed under or linked from
 * pages. Reads outside a
 * transaction use the read connection; everything a write decides on is read again inside it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import { statementsOn, type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import type { PageRow as TreeRow } from "./tree.js"
import type { Source } from "../knowledgebases/domain.js"
import { folderTemplate, type PageRevision, type PageSummary } from "./domain.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const knowledgebasesWrites = declareWrites("knowledgebases")
const pageLinksWrites = declareWrites("page_links")
const pageRevisionsWrites = declareWrites("page_revisions")
const pagesWrites = declareWrites("pages")

/** A page row as stored. */
export interface PageRow {
  readonly id: string
  readonly organization_id: string
  readonly knowledgebase_id: string
  readonly parent_page_id: string | null
  readonly title: string
  readonly description: string
  readonly template_key: string
  readonly markdown: string
  readonly hook: string
  readonly revision: number
  readonly author: string | null
  readonly created_at: string
  readonly updated_at: string
}

interface RevisionRow {
  readonly id: string
  readonly number: number | null
  readonly kind: PageRevision["kind"]
  readonly status: PageRevision["status"]
  readonly title: string
  readonly description: string
  readonly markdown: string
  readonly author: string | null
  readonly created_at: string
  readonly reviewed_at: string | null
}

/** A page's new body, description and revision number. */
export interface ContentChange {
  readonly markdown: string
  readonly description: string
  readonly hook: string
  readonly revision: number
  readonly at: string
}

/** A revision as stored (its insertion sequence is assigned by the database), with what it proposes to do. */
export interface StoredRevision extends RevisionRow {
  readonly organization_id: string
  readonly knowledgebase_id: string
  readonly page_id: string
  readonly operation: string
}

/** The summary of a stored page. */
export const toSummary = (row: PageRow): PageSummary => ({
  id: row.id,
  knowledgebaseId: row.knowledgebase_id,
  title: row.title,
  templateKey: row.template_key,
  parentPageId: row.parent_page_id,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  description: row.description,
  isFolder: row.template_key === folderTemplate
})

const toRevision = (row: RevisionRow): PageRevision => ({
  id: row.id,
  number: row.number,
  kind: row.kind,
  status: row.status,
  title: row.title,
  description: row.description,
  markdown: row.markdown,
  author: row.author,
  createdAt: row.created_at,
  reviewedAt: row.reviewed_at
})

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ")

/** Pages in SQL. */
export class PageRepo extends Effect.Service<PageRepo>()("svc/PageRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const orDie = Effect.orDie
    const statements = statementsOn(sql)

    return {
      /** How many pages the organization has, in all its Knowledgebases. */
      count: (organizationId: string) => organizationRowCount(sql, "pages", organizationId),
      /** A page of the Knowledgebase (read connection). */
      find: (knowledgebaseId: string, pageId: string) =>
        orDie(
          reader
            .all<PageRow>("SELECT * FROM pages WHERE knowledgebase_id = ? AND id = ?", [knowledgebaseId, pageId])
            .pipe(Effect.map((rows) => rows[0] ?? null))
        ),
      /** Every page and folder of the Knowledgebase, as the tree index needs them (read connection). */
      treeRows: (knowledgebaseId: string) =>
        orDie(
          reader.all<TreeRow>(
            `SELECT id, parent_page_id AS "parentPageId", title, description, template_key AS "templateKey",
               updated_at AS "updatedAt", created_at AS "createdAt", hook
             FROM pages WHERE knowledgebase_id = ?`,
            [knowledgebaseId]
          )
        ),
      /** Authors, creation times and UTF-8 body sizes of every page, for an export (read connection). */
      exportFacts: (knowledgebaseId: string) =>
        orDie(
          reader
            .all<{ id: string; author: string | null; created_at: string; markdown_bytes: number }>(
              "SELECT id, author, created_at, octet_length(markdown) AS markdown_bytes FROM pages WHERE knowledgebase_id = ?",
              [knowledgebaseId]
            )
            .pipe(Effect.map((rows) => new Map(rows.map((row) => [row.id, row]))))
        ),
      /** One page's body, read when an export reaches it (read connection). */
      markdownOf: (pageId: string) =>
        orDie(
          reader
            .all<{ markdown: string }>("SELECT markdown FROM pages WHERE id = ?", [pageId])
            .pipe(Effect.map((rows) => rows[0]?.markdown ?? ""))
        ),
      /** A page of the Knowledgebase, read inside the current transaction. */
      findForUpdate: (knowledgebaseId: string, pageId: string) => statements(findPageTx(knowledgebaseId, pageId)),
      /** Titles of the given pages that belong to the Knowledgebase (inside the transaction). */
      titlesOf: (knowledgebaseId: string, ids: ReadonlyArray<string>) => statements(titlesOfTx(knowledgebaseId, ids)),
      /** The page and every page above it, nearest first (inside the transaction). */
      ancestorsOf: (pageId: string) =>
        orDie(
          sql<{ id: string }>`WITH RECURSIVE up(id, parent, hops) AS (
              SELECT id, parent_page_id, 0 FROM pages WHERE id = ${pageId}
              UNION ALL SELECT p.id, p.parent_page_id, up.hops + 1 FROM pages p JOIN up ON p.id = up.parent
              WHERE up.hops < 10000
            ) SELECT id FROM up ORDER BY hops`.pipe(Effect.map((rows) => rows.map((row) => row.id)))
        ),
      /** Direct children of a page, in tree order, with their own child counts (read connection). */
      children: (knowledgebaseId: string, pageId: string) =>
        orDie(
          reader.all<{ id: string; title: string; description: string; template_key: string; child_count: number }>(
            `SELECT p.id, p.title, p.description, p.template_key,
               (SELECT count(*) FROM pages c WHERE c.parent_page_id = p.id) AS child_count
             FROM pages p WHERE p.knowledgebase_id = ? AND p.parent_page_id = ? ORDER BY p.created_at, p.id`,
            [knowledgebaseId, pageId]
          )
        ),
      /** Pages this page links to, and pages linking to it (read connection). */
      linksOf: (pageId: string) =>
        orDie(
          Effect.all({
            related: reader.all<{ id: string; title: string }>(
              `SELECT p.id, p.title FROM page_links l JOIN pages p ON p.id = l.target_page_id
               WHERE l.page_id = ? ORDER BY p.title, p.id`,
              [pageId]
            ),
            referencedBy: reader.all<{ id: string; title: string }>(
              `SELECT p.id, p.title FROM page_links l JOIN pages p ON p.id = l.page_id
               WHERE l.target_page_id = ? ORDER BY p.title, p.id`,
              [pageId]
            )
          })
        ),
      /** Up to `limit + 1` revisions of a page, newest first by insertion order (read connection). */
      revisions: (pageId: string, page: PageRequest) =>
        orDie(
          (page.after === null
            ? reader.all<RevisionRow & { seq: number }>(
                "SELECT * FROM page_revisions WHERE page_id = ? ORDER BY seq DESC LIMIT ?",
                [pageId, page.limit + 1]
              )
            : reader.all<RevisionRow & { seq: number }>(
                "SELECT * FROM page_revisions WHERE page_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
                [pageId, Number(page.after[0]), page.limit + 1]
              )
          ).pipe(Effect.map((rows) => rows.map((row) => ({ seq: row.seq, revision: toRevision(row) }))))
        ),
      /** A revision of the organization (inside the transaction). */
      revisionForUpdate: (organizationId: string, revisionId: string) =>
        orDie(
          sql<StoredRevision>`SELECT * FROM page_revisions WHERE organization_id = ${organizationId} AND id = ${revisionId}`.pipe(
            Effect.map((rows) => rows[0] ?? null)
          )
        ),
      /** Revisions waiting for review in the organization, oldest first. */
      pendingRevisions: (organizationId: string) =>
        orDie(
          sql<StoredRevision>`SELECT * FROM page_revisions WHERE organization_id = ${organizationId}
            AND status = 'pending_review' ORDER BY seq`
        ),

      /** Inserts a page with the next full-text key (inside the transaction). */
      insertPage: (row: PageRow) =>
        orDie(
          Effect.flatMap(
            sql<{ key: number }>`SELECT coalesce(max(fts_key), 0) + 1 AS key FROM pages`,
            ([next]) => sql`INSERT INTO pages ${sql.insert({ ...row, fts_key: next!.key } as unknown as Record<string, unknown>)}`.pipe(writing(pagesWrites))
          )
        ),
      updateContent: (pageId: string, change: ContentChange) => statements(updateContentTx(pageId, change)),
      moveTo: (pageId: string, parentPageId: string | null, at: string) =>
        orDie(sql`UPDATE pages SET parent_page_id = ${parentPageId}, updated_at = ${at} WHERE id = ${pageId}`.pipe(writing(pagesWrites))),
      insertRevision: (row: StoredRevision) => statements(insertRevisionTx(row)),
      settleRevision: (revisionId: string, status: "applied" | "rejected", number: number | null, at: string) =>
        orDie(sql`UPDATE page_revisions SET status = ${status}, number = ${number}, reviewed_at = ${at} WHERE id = ${revisionId}`.pipe(writing(pageRevisionsWrites))),
      /** Replaces the page's outgoing links with `targets` (pages of the same Knowledgebase). */
      setLinks: (pageId: string, targets: ReadonlyArray<string>) => statements(setLinksTx(pageId, targets)),
      /** Marks the Knowledgebase changed, adding `pagesDelta` to its page count. */
      touchKnowledgebase: (knowledgebaseId: string, pagesDelta: number, at: string) =>
        statements(touchKnowledgebaseTx(knowledgebaseId, pagesDelta, at)),
      /** Sources filed under a page or folder (its attached files; read connection). */
      sourcesFiledUnder: (pageId: string) =>
        orDie(
          reader.all<{ id: string; name: string; type: string; status: Source["status"] }>(
            "SELECT id, name, type, status FROM sources WHERE parent_page_id = ? ORDER BY created_at, id",
            [pageId]
          )
        ),
      /** Names of the given sources attached to the Knowledgebase (`svcsource://` links in a page body). */
      sourceNamesIn: (knowledgebaseId: string, ids: ReadonlyArray<string>) => statements(sourceNamesInTx(knowledgebaseId, ids))
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}

/*
 * Transaction body steps (`WriteTransactions`): each is the only copy of its SQL; the repository's
 * Effect methods run the same steps inside the caller's `@effect/sql` transaction.
 */

/** The page row, read inside the write's transaction. */
export function* findPageTx(knowledgebaseId: string, pageId: string): TxBody<PageRow | null> {
  const rows = yield* txAll<PageRow>("SELECT * FROM pages WHERE knowledgebase_id = ? AND id = ?", [knowledgebaseId, pageId])
  return rows[0] ?? null
}

/** Titles of the given pages that belong to the Knowledgebase. */
export function* titlesOfTx(knowledgebaseId: string, ids: ReadonlyArray<string>): TxBody<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = yield* txAll<{ id: string; title: string }>(
    `SELECT id, title FROM pages WHERE knowledgebase_id = ? AND id IN (${placeholders(ids.length)})`,
    [knowledgebaseId, ...ids]
  )
  return new Map(rows.map((row) => [row.id, row.title]))
}

/** Names of the given sources attached to the Knowledgebase. */
export function* sourceNamesInTx(knowledgebaseId: string, ids: ReadonlyArray<string>): TxBody<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = yield* txAll<{ id: string; name: string }>(
    `SELECT s.id, s.name FROM knowledgebase_sources ks JOIN sources s ON s.id = ks.source_id
     WHERE ks.knowledgebase_id = ? AND s.id IN (${placeholders(ids.length)})`,
    [knowledgebaseId, ...ids]
  )
  return new Map(rows.map((row) => [row.id, row.name]))
}

/** Sets a page's body, description, hook and revision. */
export function* updateContentTx(pageId: string, change: ContentChange): TxBody<void> {
  yield* txRun("UPDATE pages SET markdown = ?, description = ?, hook = ?, revision = ?, updated_at = ? WHERE id = ?", [
    change.markdown,
    change.description,
    change.hook,
    change.revision,
    change.at,
    pageId
  ], pagesWrites)
}

/** Stores a revision. */
export function* insertRevisionTx(row: StoredRevision): TxBody<void> {
  yield* txRun(
    `INSERT INTO page_revisions (id, organization_id, knowledgebase_id, page_id, number, kind, status, operation, title, description,
       markdown, author, created_at, reviewed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.organization_id,
      row.knowledgebase_id,
      row.page_id,
      row.number,
      row.kind,
      row.status,
      row.operation,
      row.title,
      row.description,
      row.markdown,
      row.author,
      row.created_at,
      row.reviewed_at
    ],
    pageRevisionsWrites
  )
}

/** Replaces the page's outgoing links with `targets` (pages of the same Knowledgebase). */
export function* setLinksTx(pageId: string, targets: ReadonlyArray<string>): TxBody<void> {
  yield* txRun("DELETE FROM page_links WHERE page_id = ?", [pageId], pageLinksWrites)
  for (const target of targets) yield* txRun("INSERT INTO page_links (page_id, target_page_id) VALUES (?, ?)", [pageId, target], pageLinksWrites)
}

/** Marks the Knowledgebase changed, adding `pagesDelta` to its page count. */
export function* touchKnowledgebaseTx(knowledgebaseId: string, pagesDelta: number, at: string): TxBody<void> {
  yield* txRun("UPDATE knowledgebases SET pages_count = pages_count + ?, updated_at = ? WHERE id = ?", [pagesDelta, at, knowledgebaseId], knowledgebasesWrites)
}
