/**
 * Reads execution traces: the `trace` column of `executions` (migration 0025), written by the
 * statement that finishes the execution (`finishExecutionTx`) and read by id once the execution was
 * found in the caller's organization.
 */
import { Effect } from "effect"
import type { ExecutionTrace } from "../trace.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"

/** Reads execution traces. */
export class TraceRepo extends Effect.Service<TraceRepo>()("svc/TraceRepo", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection
    return {
      /** The stored trace of an execution (read connection), or null when none was recorded. */
      trace: (executionId: string): Effect.Effect<ExecutionTrace | null> =>
        Effect.orDie(
          reader
            .all<{ trace: string | null }>("SELECT trace FROM executions WHERE id = ?", [executionId])
            .pipe(Effect.map((rows) => (rows[0]?.trace == null ? null : (JSON.parse(rows[0].trace) as ExecutionTrace))))
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
