/**
 * The SQL of the state turns share across instances on PostgreSQL (`shared-turns.ts`): the lease on
 * a conversation (`conversation_locks`, migration 0024), its release, and an execution's status read
 * by a cancel that waits for another instance to record it. Each statement is one round trip, outside
 * any transaction.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InstanceRegistry, databaseNowMs } from "../../platform/instances/registry.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const conversationLocksWrites = declareWrites("conversation_locks")

/** The notification channel on which a released conversation is announced (payload: its id). */
export const conversationFreedChannel = "svc_conversation_freed"

/** The notification channel of cancel requests (payload: the execution id). */
export const runCancelChannel = "svc_run_cancel"

/** Conversation leases and execution status for turns shared across instances. */
export class LeaseRepo extends Effect.Service<LeaseRepo>()("svc/LeaseRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const instance = yield* InstanceRegistry
    const now = databaseNowMs(sql)
    // Qualified: in ON CONFLICT's WHERE a bare `claimed_by` could also be `excluded`'s.
    const held = sql.literal("conversation_locks.claimed_by")
    return {
      /**
       * Takes `conversationId`'s lease for this instance under `token` when it is free, or held by an
       * instance that is gone (no live `service_instances` row: crashed, or stalled past its lease),
       * or by this instance itself (a hold whose release failed: this instance's own turns are
       * already serialized in memory). One conditional upsert; true when taken.
       */
      take: (conversationId: string, token: string): Effect.Effect<boolean> =>
        Effect.flatMap(instance.claimant, (me) =>
          sql<{ token: string }>`INSERT INTO conversation_locks (conversation_id, claimed_by, token, taken_at)
            VALUES (${conversationId}, ${me}, ${token}, ${now})
            ON CONFLICT (conversation_id) DO UPDATE SET claimed_by = excluded.claimed_by, token = excluded.token, taken_at = excluded.taken_at
            WHERE conversation_locks.claimed_by = ${me} OR ${instance.claimantGone(held)}
            RETURNING token`.pipe(
            writing(conversationLocksWrites),
            Effect.map((rows) => rows.length === 1 && rows[0]!.token === token),
            Effect.orDie
          )
        ),

      /** Gives `conversationId`'s lease back if `token` still holds it, announcing it on `conversationFreedChannel`. */
      release: (conversationId: string, token: string): Effect.Effect<void> =>
        sql`WITH freed AS (DELETE FROM conversation_locks WHERE conversation_id = ${conversationId} AND token = ${token} RETURNING conversation_id)
          SELECT pg_notify(${conversationFreedChannel}, conversation_id) FROM freed`.pipe(writing(conversationLocksWrites), Effect.asVoid, Effect.orDie),

      /** Asks every instance (the one running it acts) to cancel `executionId`: a notification on `runCancelChannel`. */
      askToCancel: (executionId: string): Effect.Effect<void> =>
        Effect.asVoid(Effect.orDie(sql`SELECT pg_notify(${runCancelChannel}, ${executionId})`)),

      /** Whether an execution is still `running` (false once recorded finished, or when there is none). */
      stillRunning: (executionId: string): Effect.Effect<boolean> =>
        sql<{ id: string }>`SELECT id FROM executions WHERE id = ${executionId} AND status = 'running'`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
    }
  })
}) {}
