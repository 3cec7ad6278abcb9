/**
 * Members' memories: personal notes, searched only by their own member's personal keys (and later
 * the MCP memory tools). Written here by `svc memories add`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import { insertMemoryTx, memoriesOfTx, removeMemoryTx } from "./repo.js"

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
    const statements = statementsOn(yield* SqlClient.SqlClient)
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
          yield* statements(insertMemoryTx(organizationId, memberId, memory, at))
          return memory
        }),
      /** A member's memories, oldest first (their export). */
      of: (memberId: string) =>
        statements(memoriesOfTx(memberId)).pipe(
          Effect.map((rows) => rows.map((row): Memory => ({ id: row.id, text: row.text, createdAt: row.created_at, updatedAt: row.updated_at })))
        ),
      /** Deletes one of a member's own memories; another member's (or an unknown) id is `not_found`. */
      remove: (memberId: string, memoryId: string) =>
        Effect.gen(function* () {
          if (!(yield* statements(removeMemoryTx(memberId, memoryId)))) return yield* new NotFound({ message: `No memory '${memoryId}' of yours.` })
          return { ok: true as const, memoryId }
        })
    }
  })
}) {}
