/**
 * The SQL of authoring's reference checks (`references.ts`): which ids a body names are rows of the
 * caller's organization, and the published version of the members a publish pins. Read on the
 * write connection inside the caller's transaction.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Tables whose rows may be referenced by id. */
export type ReferencedTable = "knowledgebases" | "agents" | "flows"

/** Which of `ids` are rows of `table` in the organization (on the write connection, inside the caller's transaction). */
export const existingIds = (sql: SqlClient.SqlClient, table: ReferencedTable, organizationId: string, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(new Set<string>())
    : Effect.orDie(
        sql<{ id: string }>`SELECT id FROM ${sql(table)} WHERE organization_id = ${organizationId} AND ${sql.in("id", ids)}`.pipe(
          Effect.map((rows) => new Set(rows.map((row) => row.id)))
        )
      )

/**
 * The published version of each of `ids` that is a row of `table` in the organization (null: never
 * published), read on the write connection inside the caller's transaction: what a publish pins.
 */
export const publishedVersions = (sql: SqlClient.SqlClient, table: "agents" | "flows", organizationId: string, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(new Map<string, number | null>())
    : Effect.orDie(
        sql<{ id: string; published_version: number | null }>`SELECT id, published_version FROM ${sql(table)}
          WHERE organization_id = ${organizationId} AND ${sql.in("id", ids)}`.pipe(
          Effect.map((rows) => new Map(rows.map((row) => [row.id, row.published_version])))
        )
      )
