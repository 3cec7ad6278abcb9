/**
 * The versioned-item pattern in SQL, shared by Agents, Flows and Apps: an item row holds the draft
 * (`name`, `description`, the rest as JSON text in `draft`) and `published_version`; each publish
 * copies the draft into an immutable numbered row of the item's versions table (1, 2, …).
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import type { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** Where a kind of item is kept. */
export interface VersionedTables {
  /** The item table: `agents`, `flows` or `apps`. */
  readonly items: "agents" | "flows" | "apps"
  /** Its versions table. */
  readonly versions: "agent_versions" | "flow_versions" | "app_versions"
  /** The versions table's column naming the item. */
  readonly itemColumn: "agent_id" | "flow_id" | "app_id"
}

/** An item row: its draft and which version is published. */
export interface ItemRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly draft: string
  readonly published_version: number | null
  readonly created_at: string
  readonly updated_at: string
}

/** A published version row (the columns every versions table has). */
export interface VersionRow {
  readonly version: number
  readonly name: string
  readonly description: string
  readonly definition: string
  readonly published_at: string
}

/** A published item as listed: its position and its published version's name and description. */
export interface PublishedListRow {
  readonly id: string
  readonly created_at: string
  readonly name: string
  readonly description: string
}

/** A draft as saved. */
export interface DraftValues {
  readonly name: string
  readonly description: string
  /** The rest of the definition, as JSON text. */
  readonly draft: string
}

/** Columns a versions table has beyond the shared ones (Apps keep their contract in columns). */
export type ExtraVersionColumns = Readonly<Record<string, string | number | null>>

const itemColumns = "id, name, description, draft, published_version, created_at, updated_at"
const afterClause = (page: PageRequest) => (page.after === null ? "" : "AND (i.created_at, i.id) > (?, ?)")
const afterParams = (page: PageRequest) => (page.after === null ? [] : [page.after[0] ?? "", page.after[1] ?? ""])

/** The SQL of one kind of versioned item: writes on `sql` (inside the caller's transaction), reads on `reader`. */
export const versionedStore = (sql: SqlClient.SqlClient, reader: ReadConnection, tables: VersionedTables) => {
  const { items, versions, itemColumn } = tables
  // What the write statements below write (`write-declaration.ts`).
  const itemWrites = declareWrites(items)
  const versionWrites = declareWrites(versions)
  return {
    /** How many items the organization has, published or not. */
    count: (organizationId: string) => organizationRowCount(sql, items, organizationId),

    /** Inserts a new item with its first draft, unpublished. */
    insert: (organizationId: string, id: string, draft: DraftValues, at: string) =>
      Effect.orDie(
        sql`INSERT INTO ${sql(items)} ${sql.insert({
          id,
          organization_id: organizationId,
          name: draft.name,
          description: draft.description,
          draft: draft.draft,
          published_version: null,
          created_at: at,
          updated_at: at
        })}`.pipe(writing(itemWrites))
      ),

    /** The item of the organization with its draft (read connection), or null. */
    item: (organizationId: string, id: string) =>
      Effect.orDie(
        reader
          .all<ItemRow>(`SELECT ${itemColumns} FROM ${items} WHERE organization_id = ? AND id = ?`, [organizationId, id])
          .pipe(Effect.map((rows) => rows[0] ?? null))
      ),

    /** The item of the organization as the write connection sees it (inside a transaction), or null. */
    itemForWrite: (organizationId: string, id: string) =>
      Effect.orDie(
        sql<ItemRow>`SELECT ${sql.literal(itemColumns)} FROM ${sql(items)}
          WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(Effect.map((rows) => rows[0] ?? null))
      ),

    /** Replaces the draft. */
    saveDraft: (organizationId: string, id: string, draft: DraftValues, at: string) =>
      Effect.orDie(
        sql`UPDATE ${sql(items)} SET name = ${draft.name}, description = ${draft.description}, draft = ${draft.draft},
          updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(writing(itemWrites))
      ),

    /**
     * Copies the current draft into the next numbered version and publishes it; answers its number,
     * or null when the item is not in the organization. Run inside a transaction: the item row is
     * updated first, so concurrent publishes of one item serialize on it.
     */
    publish: (organizationId: string, id: string, at: string, extra: ExtraVersionColumns = {}) =>
      Effect.orDie(
        Effect.gen(function* () {
          yield* sql`UPDATE ${sql(items)} SET published_version = COALESCE(published_version, 0) + 1, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(writing(itemWrites))
          const rows = yield* sql<ItemRow>`SELECT ${sql.literal(itemColumns)} FROM ${sql(items)}
            WHERE organization_id = ${organizationId} AND id = ${id}`
          const row = rows[0]
          if (!row || row.published_version === null) return null
          yield* sql`INSERT INTO ${sql(versions)} ${sql.insert({
            [itemColumn]: id,
            version: row.published_version,
            name: row.name,
            description: row.description,
            definition: row.draft,
            published_at: at,
            ...extra
          })}`.pipe(writing(versionWrites))
          return row.published_version
        })
      ),

    /** The published version of an item of the organization (read connection), or null when never published. */
    published: <Extra extends object = object>(organizationId: string, id: string) =>
      Effect.orDie(
        reader
          .all<VersionRow & Extra & { readonly id: string; readonly created_at: string }>(
            `SELECT i.id, i.created_at, v.* FROM ${items} i JOIN ${versions} v ON v.${itemColumn} = i.id AND v.version = i.published_version
              WHERE i.organization_id = ? AND i.id = ?`,
            [organizationId, id]
          )
          .pipe(Effect.map((rows) => rows[0] ?? null))
      ),

    /** Deletes an item of the organization with its versions; answers whether it existed. */
    remove: (organizationId: string, id: string) =>
      Effect.orDie(
        Effect.map(
          sql<{ id: string }>`SELECT id FROM ${sql(items)} WHERE organization_id = ${organizationId} AND id = ${id}`,
          (rows) => rows.length > 0
        ).pipe(
          Effect.tap((found) =>
            found ? sql`DELETE FROM ${sql(items)} WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(writing(itemWrites)) : Effect.void
          )
        )
      ),

    /** Up to `limit + 1` published items (their published version's name), published at or after `since`. */
    listPublished: <Extra extends object = object>(organizationId: string, since: string | null, page: PageRequest) =>
      Effect.orDie(
        reader.all<PublishedListRow & VersionRow & Extra>(
          `SELECT i.id, i.created_at, v.* FROM ${items} i JOIN ${versions} v ON v.${itemColumn} = i.id AND v.version = i.published_version
            WHERE i.organization_id = ? AND v.published_at >= ? ${afterClause(page)}
            ORDER BY i.created_at, i.id LIMIT ?`,
          [organizationId, since ?? "", ...afterParams(page), page.limit + 1]
        )
      ),

    /** Up to `limit + 1` items, published or not, changed at or after `since`. */
    listWithDrafts: (organizationId: string, since: string | null, page: PageRequest) =>
      Effect.orDie(
        reader.all<ItemRow>(
          `SELECT ${itemColumns} FROM ${items} i WHERE i.organization_id = ? AND i.updated_at >= ? ${afterClause(page)}
            ORDER BY i.created_at, i.id LIMIT ?`,
          [organizationId, since ?? "", ...afterParams(page), page.limit + 1]
        )
      )
  }
}

/** The SQL of one kind of versioned item. */
export type VersionedStore = ReturnType<typeof versionedStore>
