/** SQL for the changes feed: writes append inside the caller's transaction, reads use the read connection. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { statementsOn, type TxBody, txRun } from "../../platform/sql/write-fast-path.js"
import type { Change } from "./domain.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const changesWrites = declareWrites("changes")

/** The changes feed in SQL. */
export class ChangeRepo extends Effect.Service<ChangeRepo>()("svc/ChangeRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const orDie = Effect.orDie
    const statements = statementsOn(sql)
    return {
      /** Appends a change of an object to the feed (every change is kept, in write order; inside a write). */
      record: (organizationId: string, change: Change) => statements(recordChangeTx(organizationId, change)),
      /** The organization's latest feed sequence (0 when empty; read connection). */
      lastSequence: (organizationId: string) =>
        orDie(
          reader
            .all<{ n: number | null }>("SELECT max(sequence) AS n FROM changes WHERE organization_id = ?", [organizationId])
            .pipe(Effect.map((rows) => rows[0]?.n ?? 0))
        ),
      /** Up to `limit + 1` feed entries after `afterSequence`, changed at or after `since` (read connection). */
      list: (scope: { organizationId: string; knowledgebaseId: string | null }, since: string | null, afterSequence: number, limit: number) =>
        orDie(
          reader.all<{ sequence: number; knowledgebase_id: string; object_type: Change["type"]; object_id: string; change: string; changed_at: string }>(
            `SELECT sequence, knowledgebase_id, object_type, object_id, change, changed_at FROM changes
             WHERE organization_id = ? ${scope.knowledgebaseId === null ? "" : "AND knowledgebase_id = ?"}
               AND sequence > ? AND changed_at >= ? ORDER BY sequence LIMIT ?`,
            [
              scope.organizationId,
              ...(scope.knowledgebaseId === null ? [] : [scope.knowledgebaseId]),
              afterSequence,
              since ?? "",
              limit + 1
            ]
          )
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}

/** Appends a change of an object to the feed, as a transaction body step (`WriteTransactions`). */
export function* recordChangeTx(organizationId: string, change: Change): TxBody<void> {
  yield* txRun(
    `INSERT INTO changes (organization_id, knowledgebase_id, object_type, object_id, change, changed_at) VALUES (?, ?, ?, ?, ?, ?)`,
    [organizationId, change.knowledgebaseId, change.type, change.id, change.change, change.changedAt],
    changesWrites
  )
}
