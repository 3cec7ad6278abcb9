/**
 * Reference checks for authoring: every id a body names (`knowledgebaseIds`, `flowIds`,
 * `agentIds`) must be an item of the caller's organization; ids of another organization are
 * missing. Every problem is named at once, before anything is written.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest } from "../../platform/errors.js"

/** One list of references in a body. */
export interface ReferenceList {
  /** The body property, e.g. `knowledgebaseIds`. */
  readonly field: string
  /** What its ids name, e.g. `Knowledgebase`. */
  readonly noun: string
  readonly ids: ReadonlyArray<string>
  /** The ids found in the caller's organization. */
  readonly found: ReadonlySet<string>
}

/** The problems of reference lists, in body order: ids found nowhere in the organization, and repeats. */
export const referenceProblems = (lists: ReadonlyArray<ReferenceList>): Array<string> =>
  lists.flatMap(({ field, noun, ids, found }) =>
    ids.flatMap((id, index) => {
      if (!found.has(id)) return [`${field}[${index}]: no ${noun} '${id}' in this organization`]
      const first = ids.indexOf(id)
      return first < index ? [`${field}[${index}]: '${id}' is already listed at ${field}[${first}]`] : []
    })
  )

/** Fails with `invalid_request` naming every problem, if there is any. */
export const refuseProblems = (problems: ReadonlyArray<string>): Effect.Effect<void, InvalidRequest> =>
  problems.length === 0 ? Effect.void : Effect.fail(new InvalidRequest({ message: `${problems.join("; ")}.` }))

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

/** One list of members to pin, with what the organization holds of them. */
export interface MemberList {
  readonly field: string
  readonly noun: string
  readonly ids: ReadonlyArray<string>
  readonly versions: ReadonlyMap<string, number | null>
}

/** The problems of pinning members: missing ones and never-published ones, every one named. */
export const pinProblems = (lists: ReadonlyArray<MemberList>): Array<string> =>
  lists.flatMap(({ field, noun, ids, versions }) =>
    ids.flatMap((id, index) => {
      if (!versions.has(id)) return [`${field}[${index}]: no ${noun} '${id}' in this organization`]
      return versions.get(id) === null ? [`${field}[${index}]: ${noun} '${id}' was never published; publish it first`] : []
    })
  )
