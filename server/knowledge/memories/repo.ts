/**
 * SQL of members' memories (`memories`) as transaction body steps: a memory added (with the next
 * full-text key), a member's memories, one removed. `MemoryService` runs them through `statementsOn`.
 */
import { type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const memoriesWrites = declareWrites("memories")

/** A memory row as read back. */
export interface MemoryRow {
  readonly id: string
  readonly text: string
  readonly created_at: string
  readonly updated_at: string
}

/** Stores a member's memory under the next full-text key. */
export function* insertMemoryTx(organizationId: string, memberId: string, memory: { readonly id: string; readonly text: string }, at: string): TxBody<void> {
  yield* txRun(
    `INSERT INTO memories (id, organization_id, member_id, text, created_at, updated_at, fts_key)
     VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(fts_key), 0) + 1 FROM memories))`,
    [memory.id, organizationId, memberId, memory.text, at, at],
    memoriesWrites
  )
}

/** A member's memories, oldest first. */
export function* memoriesOfTx(memberId: string): TxBody<ReadonlyArray<MemoryRow>> {
  return yield* txAll<MemoryRow>("SELECT id, text, created_at, updated_at FROM memories WHERE member_id = ? ORDER BY created_at, id", [memberId])
}

/** Deletes one of a member's memories; false when the member has no memory with this id. */
export function* removeMemoryTx(memberId: string, memoryId: string): TxBody<boolean> {
  const rows = yield* txAll<{ id: string }>("DELETE FROM memories WHERE id = ? AND member_id = ? RETURNING id", [memoryId, memberId], memoriesWrites)
  return rows.length > 0
}
