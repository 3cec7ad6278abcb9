/**
 * SQL for Apps: the versioned-item store over `apps` and `app_versions` (whose rows also keep the
 * Transaction Service contract in columns), the published listing (each App's pinned version) and
 * the listing with drafts.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { placeholders, textPerCount } from "../../platform/sql/statement-text.js"
import { type TxBody, txAll } from "../../platform/sql/write-fast-path.js"
import { versionedStore } from "../versions/store-repo.js"
import type { AppDraftItem, PublishedApp } from "./domain.js"

interface PublishedRow {
  readonly id: string
  readonly created_at: string
  readonly name: string
  readonly description: string
  readonly conversation_enabled: number
  readonly transaction_enabled: number
  readonly input_schema: string | null
  readonly output_schema: string | null
}

interface DraftRow {
  readonly id: string
  readonly created_at: string
  readonly name: string
  readonly description: string
  readonly published_version: number | null
  readonly updated_at: string
}

/** A listed row with the position it pages by. */
export interface Positioned<A> {
  readonly item: A
  readonly id: string
  readonly createdAt: string
}

const parseSchema = (text: string | null) => (text === null ? null : (JSON.parse(text) as Record<string, unknown>))

/** A published version's contract: its services, and its schemas while the Transaction Service is on. */
export const contractOf = (row: Omit<PublishedRow, "id" | "created_at" | "name" | "description">) => ({
  services: { conversation: row.conversation_enabled === 1, transaction: row.transaction_enabled === 1 },
  inputSchema: row.transaction_enabled === 1 ? parseSchema(row.input_schema) : null,
  outputSchema: row.transaction_enabled === 1 ? parseSchema(row.output_schema) : null
})

const toPublished = (row: PublishedRow): Positioned<PublishedApp> => ({
  id: row.id,
  createdAt: row.created_at,
  item: { id: row.id, name: row.name, description: row.description, ...contractOf(row) }
})

const toDraft = (row: DraftRow): Positioned<AppDraftItem> => ({
  id: row.id,
  createdAt: row.created_at,
  item: {
    id: row.id,
    name: row.name,
    description: row.description,
    published: row.published_version !== null,
    updatedAt: row.updated_at
  }
})

const afterClause = (page: PageRequest) => (page.after === null ? "" : "AND (a.created_at, a.id) > (?, ?)")
const afterParams = (page: PageRequest) => (page.after === null ? [] : [page.after[0] ?? "", page.after[1] ?? ""])

/** The contract columns of an App's version row. */
export interface AppContractColumns {
  readonly conversation_enabled: number
  readonly transaction_enabled: number
  readonly input_schema: string | null
  readonly output_schema: string | null
}

/** A published App as other families show it: its id and its published name and description. */
export interface PublishedAppRef {
  readonly id: string
  readonly name: string
  readonly description: string
}

const publishedAppsText = textPerCount(
  (count) => `SELECT a.id, v.name, v.description FROM apps a
    JOIN app_versions v ON v.app_id = a.id AND v.version = a.published_version
    WHERE a.organization_id = ? AND a.id IN (${placeholders(count)}) ORDER BY v.name, a.id`
)

/** The published Apps of the organization among `ids`, by published name then id (a transaction body step). */
export function* publishedAppsTx(organizationId: string, ids: ReadonlyArray<string>): TxBody<ReadonlyArray<PublishedAppRef>> {
  if (ids.length === 0) return []
  return yield* txAll<PublishedAppRef>(publishedAppsText(ids.length), [organizationId, ...ids])
}

/** Apps in SQL. */
export class AppRepo extends Effect.Service<AppRepo>()("svc/AppRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const store = versionedStore(sql, reader, { items: "apps", versions: "app_versions", itemColumn: "app_id" })
    return {
      ...store,
      /** Up to `limit + 1` published Apps (their pinned version), published at or after `since`. */
      listPublished: (organizationId: string, since: string | null, page: PageRequest) =>
        Effect.orDie(
          reader
            .all<PublishedRow>(
              `SELECT a.id, a.created_at, v.name, v.description, v.conversation_enabled, v.transaction_enabled,
                  v.input_schema, v.output_schema
                FROM apps a JOIN app_versions v ON v.app_id = a.id AND v.version = a.published_version
                WHERE a.organization_id = ? AND v.published_at >= ? ${afterClause(page)}
                ORDER BY a.created_at, a.id LIMIT ?`,
              [organizationId, since ?? "", ...afterParams(page), page.limit + 1]
            )
            .pipe(Effect.map((rows) => rows.map(toPublished)))
        ),
      /** Up to `limit + 1` Apps, published or not, updated at or after `since`. */
      listWithDrafts: (organizationId: string, since: string | null, page: PageRequest) =>
        Effect.orDie(
          reader
            .all<DraftRow>(
              `SELECT a.id, a.created_at, a.name, a.description, a.published_version, a.updated_at
                FROM apps a WHERE a.organization_id = ? AND a.updated_at >= ? ${afterClause(page)}
                ORDER BY a.created_at, a.id LIMIT ?`,
              [organizationId, since ?? "", ...afterParams(page), page.limit + 1]
            )
            .pipe(Effect.map((rows) => rows.map(toDraft)))
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
