/**
 * SQL of execution traces (`execution_traces`, migration 0022): one row written when an execution
 * finishes, inside that transaction, and read by id once the execution was found in the caller's
 * organization.
 */
import { Effect } from "effect"
import type { ExecutionTrace } from "../trace.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { type TxBody, txRun } from "../../platform/sql/write-fast-path.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const tracesWrites = declareWrites("execution_traces")

/** Stores the trace of an execution being finished (a transaction body step). */
export function* insertTraceTx(executionId: string, trace: ExecutionTrace): TxBody<void> {
  yield* txRun("INSERT INTO execution_traces (execution_id, trace) VALUES (?, ?)", [executionId, JSON.stringify(trace)], tracesWrites)
}

/** Reads execution traces. */
export class TraceRepo extends Effect.Service<TraceRepo>()("svc/TraceRepo", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection
    return {
      /** The stored trace of an execution (read connection), or null when none was recorded. */
      trace: (executionId: string): Effect.Effect<ExecutionTrace | null> =>
        Effect.orDie(
          reader
            .all<{ trace: string }>("SELECT trace FROM execution_traces WHERE execution_id = ?", [executionId])
            .pipe(Effect.map((rows) => (rows[0] === undefined ? null : (JSON.parse(rows[0].trace) as ExecutionTrace))))
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
