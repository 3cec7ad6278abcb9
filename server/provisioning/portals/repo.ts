/** SQL of Portals. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import { type TxBody, txAll } from "../../platform/sql/write-fast-path.js"
import type { PortalRow } from "./domain.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const portalsWrites = declareWrites("portals")

/** A Portal as other families name it: its id, organization and name. */
export interface PortalRef {
  readonly id: string
  readonly organization_id: string
  readonly name: string
}

/** The Portal with this id (of any organization), or null (a transaction body step). */
export function* portalByIdTx(id: string): TxBody<PortalRef | null> {
  const rows = yield* txAll<PortalRef>("SELECT id, organization_id, name FROM portals WHERE id = ?", [id])
  return rows[0] ?? null
}

/** Rows of `portals`. */
export class PortalRepo extends Effect.Service<PortalRepo>()("svc/PortalRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    return {
      /** How many Portals the organization has. */
      count: (organizationId: string) => organizationRowCount(sql, "portals", organizationId),
      /** Every Portal of the organization, oldest first (administration: `svc portals list`). */
      all: (organizationId: string) =>
        Effect.orDie(sql<PortalRow>`SELECT * FROM portals WHERE organization_id = ${organizationId} ORDER BY created_at, id`),
      insert: (row: PortalRow) =>
        Effect.orDie(sql`INSERT INTO portals (id, organization_id, name, created_at)
          VALUES (${row.id}, ${row.organization_id}, ${row.name}, ${row.created_at})`.pipe(writing(portalsWrites))),
      /** The organization's Portal, or null (on the write connection, so it sees the caller's transaction). */
      find: (organizationId: string, id: string) =>
        Effect.orDie(sql<PortalRow>`SELECT * FROM portals WHERE organization_id = ${organizationId} AND id = ${id}`).pipe(
          Effect.map((rows) => rows[0] ?? null)
        ),
      /** Up to `limit + 1` Portals, oldest first, after the page's position. */
      page: (organizationId: string, page: PageRequest) =>
        Effect.orDie(
          reader.all<PortalRow>(
            `SELECT * FROM portals WHERE organization_id = ? ${page.after === null ? "" : "AND (created_at, id) > (?, ?)"}
             ORDER BY created_at, id LIMIT ?`,
            [organizationId, ...(page.after === null ? [] : [page.after[0] ?? "", page.after[1] ?? ""]), page.limit + 1]
          )
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
