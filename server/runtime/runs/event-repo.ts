/** SQL of run events (migration 0021): the stored SSE events of streamed and detached runs. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"
import { type TxBody, txRun, WriteTransactions } from "../../platform/sql/write-fast-path.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const runEventsWrites = declareWrites("run_events")

/** One stored event of a run: its id (`seq`), name and JSON data. */
export interface StoredRunEvent {
  readonly seq: number
  readonly event: string
  /** The event's data as JSON text, exactly as it was sent. */
  readonly data: string
}

/** Most events one read answers; a follower reads again for the rest. */
export const runEventsPerRead = 500

const insertText = (rows: number) =>
  `INSERT INTO run_events (execution_id, seq, event, data, recorded_at) VALUES ${Array.from({ length: rows }, () => "(?, ?, ?, ?, ?)").join(", ")}`

/** Stores `events` of `executionId`, recorded at `at` (ms), as a step of the caller's transaction. */
export function* insertRunEventsTx(executionId: string, events: ReadonlyArray<StoredRunEvent>, at: number): TxBody<void> {
  const params: Array<unknown> = []
  for (const event of events) params.push(executionId, event.seq, event.event, event.data, at)
  yield* txRun(insertText(events.length), params, runEventsWrites)
}

/** Run events in SQL: one multi-row insert per batch (its own short transaction), reads on the read connection. */
export class RunEventRepo extends Effect.Service<RunEventRepo>()("svc/RunEventRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const writes = yield* WriteTransactions
    const reader = yield* ReadConnection

    return {
      /** Stores `events` of `executionId`, recorded at `at` (ms), in one short transaction of its own. */
      append: (executionId: string, events: ReadonlyArray<StoredRunEvent>, at: number): Effect.Effect<void> =>
        events.length === 0
          ? Effect.void
          : writes.run(() => insertRunEventsTx(executionId, events, at)),

      /** The events of `executionId` after `seq`, in order, at most `runEventsPerRead` (read connection). */
      after: (executionId: string, seq: number): Effect.Effect<ReadonlyArray<StoredRunEvent>> =>
        Effect.orDie(
          reader
            .all<{ seq: number | string; event: string; data: string }>(
              `SELECT seq, event, data FROM run_events WHERE execution_id = ? AND seq > ? ORDER BY seq LIMIT ${runEventsPerRead}`,
              [executionId, seq]
            )
            .pipe(Effect.map((rows) => rows.map((row) => ({ seq: Number(row.seq), event: row.event, data: row.data }))))
        ),

      /** The id of the stored final event (`done` or `error`) of `executionId`, or null (read connection). */
      finalSeq: (executionId: string): Effect.Effect<number | null> =>
        Effect.orDie(
          reader
            .all<{ seq: number | string }>("SELECT seq FROM run_events WHERE execution_id = ? AND event IN ('done', 'error') LIMIT 1", [executionId])
            .pipe(Effect.map((rows) => (rows[0] === undefined ? null : Number(rows[0].seq))))
        ),

      /** Whether any event of `executionId` is stored (read connection). */
      any: (executionId: string): Effect.Effect<boolean> =>
        Effect.orDie(
          reader
            .all<{ found: number }>("SELECT 1 AS found FROM run_events WHERE execution_id = ? LIMIT 1", [executionId])
            .pipe(Effect.map((rows) => rows.length > 0))
        ),

      /** Deletes the events recorded before `beforeMs`; answers whether there were any (a read first: usually there are none). */
      sweep: (beforeMs: number): Effect.Effect<boolean> =>
        Effect.gen(function* () {
          const old = yield* Effect.orDie(reader.all<{ found: number }>("SELECT 1 AS found FROM run_events WHERE recorded_at < ? LIMIT 1", [beforeMs]))
          if (old.length === 0) return false
          yield* Effect.orDie(sql`DELETE FROM run_events WHERE recorded_at < ${beforeMs}`.pipe(writing(runEventsWrites)))
          return true
        })
    }
  }),
  dependencies: [WriteTransactions.Default]
}) {}
