/**
 * SQL of the Knowledgebase activity log (`knowledge_activity`) as transaction body steps: a batch's
 * entries, each key trimmed to what it keeps, and a key's recent entries. `ActivityLog` runs them
 * through `statementsOn`.
 */
import { type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const knowledgeActivityWrites = declareWrites("knowledge_activity")

/** An entry as written. */
export interface ActivityEntryRow {
  readonly organizationId: string
  readonly keyId: string
  readonly connectionId: string | null
  readonly action: string
  readonly knowledgebaseId: string | null
  readonly queryFingerprint: string | null
  readonly detail: string
  readonly at: string
}

/** An entry as read back. */
export interface ActivityReadRow<Action extends string = string> {
  readonly at: string
  readonly connection_id: string | null
  readonly action: Action
  readonly knowledgebase_id: string | null
  readonly query_fingerprint: string | null
  readonly detail: string
}

/** Writes one entry. */
export function* insertActivityTx(entry: ActivityEntryRow): TxBody<void> {
  yield* txRun(
    `INSERT INTO knowledge_activity (organization_id, key_id, connection_id, action, knowledgebase_id, query_fingerprint, detail, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [entry.organizationId, entry.keyId, entry.connectionId, entry.action, entry.knowledgebaseId, entry.queryFingerprint, entry.detail, entry.at],
    knowledgeActivityWrites
  )
}

/** Deletes a key's entries beyond its newest `kept`. */
export function* trimActivityTx(keyId: string, kept: number): TxBody<void> {
  yield* txRun(
    `DELETE FROM knowledge_activity WHERE key_id = ? AND seq <= (
      SELECT seq FROM knowledge_activity WHERE key_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
    [keyId, keyId, kept],
    knowledgeActivityWrites
  )
}

const activityColumns = "SELECT at, connection_id, action, knowledgebase_id, query_fingerprint, detail FROM knowledge_activity"

/** A key's newest `limit` entries, newest first; only those of one MCP connection when `connectionId` is given. */
export function* activityOfKeyTx<Action extends string>(
  organizationId: string,
  keyId: string,
  limit: number,
  connectionId: string | undefined
): TxBody<ReadonlyArray<ActivityReadRow<Action>>> {
  return connectionId === undefined
    ? yield* txAll<ActivityReadRow<Action>>(`${activityColumns} WHERE organization_id = ? AND key_id = ? ORDER BY seq DESC LIMIT ?`, [organizationId, keyId, limit])
    : yield* txAll<ActivityReadRow<Action>>(`${activityColumns} WHERE organization_id = ? AND key_id = ? AND connection_id = ? ORDER BY seq DESC LIMIT ?`, [
        organizationId,
        keyId,
        connectionId,
        limit
      ])
}
