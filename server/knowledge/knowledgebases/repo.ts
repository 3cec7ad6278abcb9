/** SQL for Knowledgebases. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { NotFound } from "../../platform/errors.js"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import { type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import type { Knowledgebase } from "./domain.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const knowledgebasesWrites = declareWrites("knowledgebases")

interface KnowledgebaseRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly pages_count: number
  readonly sources_count: number
  readonly created_at: string
  readonly updated_at: string
}

const selectKnowledgebase =
  "SELECT id, name, description, pages_count, sources_count, created_at, updated_at FROM knowledgebases"

/** A row of `selectKnowledgebase` as raw column values, in select order. */
type KnowledgebaseValues = readonly [
  id: string,
  name: string,
  description: string,
  pagesCount: number,
  sourcesCount: number,
  createdAt: string,
  updatedAt: string
]

const fromValues = ([id, name, description, pages, sources, createdAt, updatedAt]: KnowledgebaseValues): Knowledgebase => ({
  id,
  name,
  description,
  createdAt,
  updatedAt,
  counts: { sources, pages }
})

const toKnowledgebase = (row: KnowledgebaseRow): Knowledgebase => ({
  id: row.id,
  name: row.name,
  description: row.description,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  counts: { sources: row.sources_count, pages: row.pages_count }
})

/** Knowledgebases in SQL. */
export class KnowledgebaseRepo extends Effect.Service<KnowledgebaseRepo>()("svc/KnowledgebaseRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    /** One Knowledgebase of the organization (read connection). */
    const byId = (organizationId: string, id: string) =>
      Effect.orDie(
        reader
          .all<KnowledgebaseRow>(`${selectKnowledgebase} WHERE organization_id = ? AND id = ?`, [organizationId, id])
          .pipe(Effect.map((rows) => (rows[0] ? toKnowledgebase(rows[0]) : null)))
      )
    return {
      /** How many Knowledgebases the organization has. */
      count: (organizationId: string) => organizationRowCount(sql, "knowledgebases", organizationId),
      /** Up to `limit + 1` Knowledgebases after the page position, oldest first (read connection, raw rows). */
      list: (organizationId: string, page: PageRequest) =>
        Effect.orDie(
          (page.after === null
            ? reader.values<KnowledgebaseValues>(`${selectKnowledgebase} WHERE organization_id = ? ORDER BY created_at, id LIMIT ?`, [
                organizationId,
                page.limit + 1
              ])
            : reader.values<KnowledgebaseValues>(
                `${selectKnowledgebase} WHERE organization_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`,
                [organizationId, page.after[0] ?? "", page.after[1] ?? "", page.limit + 1]
              )
          ).pipe(Effect.map((rows) => rows.map(fromValues)))
        ),
      byId,
      /** The ids of every Knowledgebase of the organization (read connection). */
      idsOf: (organizationId: string) =>
        Effect.orDie(
          reader.all<{ id: string }>("SELECT id FROM knowledgebases WHERE organization_id = ?", [organizationId]).pipe(Effect.map((rows) => rows.map((row) => row.id)))
        ),
      /** The Knowledgebase of the organization, or `not_found` (never telling whether it exists elsewhere). */
      found: (organizationId: string, id: string) =>
        Effect.flatMap(byId(organizationId, id), (kb) =>
          kb ? Effect.succeed(kb) : Effect.fail(new NotFound({ message: `No Knowledgebase '${id}' in this organization.` }))
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}

/**
 * A create's transaction body (`WriteTransactions`): counts the organization's Knowledgebases
 * against `cap` and inserts `kb` below it; `"capReached"` writes nothing.
 */
export function* createKnowledgebaseTx(
  organizationId: string,
  keyId: string | null,
  kb: Knowledgebase,
  cap: number
): TxBody<"created" | "capReached"> {
  const [count] = yield* txAll<{ n: number }>("SELECT count(*) AS n FROM knowledgebases WHERE organization_id = ?", [organizationId])
  if ((count?.n ?? 0) >= cap) return "capReached"
  yield* txRun(
    `INSERT INTO knowledgebases (id, organization_id, name, description, created_by_key_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [kb.id, organizationId, kb.name, kb.description, keyId, kb.createdAt, kb.updatedAt],
    knowledgebasesWrites
  )
  return "created"
}
