/**
 * Members' memories: personal notes, searched only by their own member's personal keys (and later
 * the MCP memory tools). Written here by `svc memories add`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"

/** A memory as answered. */
export interface Memory {
  readonly id: string
  readonly text: string
  readonly createdAt: string
  readonly updatedAt: string
}

/** The longest memory, in characters. */
export const maxMemoryChars = 10_000

/** Memories of members. */
export class MemoryService extends Effect.Service<MemoryService>()("svc/MemoryService", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clock = yield* AppClock
    return {
      /** Adds a memory for a member. */
      add: (organizationId: string, memberId: string, text: string) =>
        Effect.gen(function* () {
          const trimmed = text.trim()
          if (trimmed.length === 0 || trimmed.length > maxMemoryChars) {
            return yield* new InvalidRequest({ message: `text: a memory is 1 to ${maxMemoryChars} characters.` })
          }
          const at = isoAt(clock.now())
          const memory: Memory = { id: newId(), text: trimmed, createdAt: at, updatedAt: at }
          yield* Effect.orDie(sql`INSERT INTO memories (id, organization_id, member_id, text, created_at, updated_at, fts_key)
            VALUES (${memory.id}, ${organizationId}, ${memberId}, ${memory.text}, ${at}, ${at},
              (SELECT coalesce(max(fts_key), 0) + 1 FROM memories))`)
          return memory
        }),
      /** A member's memories, oldest first (their export). */
      of: (memberId: string) =>
        Effect.orDie(
          sql<{ id: string; text: string; created_at: string; updated_at: string }>`SELECT id, text, created_at, updated_at FROM memories
            WHERE member_id = ${memberId} ORDER BY created_at, id`.pipe(
            Effect.map((rows) => rows.map((row): Memory => ({ id: row.id, text: row.text, createdAt: row.created_at, updatedAt: row.updated_at })))
          )
        ),
      /** Deletes one of a member's own memories; another member's (or an unknown) id is `not_found`. */
      remove: (memberId: string, memoryId: string) =>
        Effect.gen(function* () {
          const rows = yield* Effect.orDie(sql<{ id: string }>`DELETE FROM memories WHERE id = ${memoryId} AND member_id = ${memberId} RETURNING id`)
          if (rows.length === 0) return yield* new NotFound({ message: `No memory '${memoryId}' of yours.` })
          return { ok: true as const, memoryId }
        })
    }
  })
}) {}
