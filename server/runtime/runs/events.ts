/** What a run reports as it goes, for streaming: shared by every kind of run. */
import { type Effect, FiberRef } from "effect"
import { cancelledByClient, stoppedByServer } from "./reasons.js"

/**
 * What a streamed turn reports: its start (before the model answers; a run without a conversation,
 * such as a Flow run on inputs, has no `conversation_id`), text as it arrives, tools as they run.
 */
export type RunEvent =
  | { readonly type: "start"; readonly executionId: string; readonly conversation_id?: string }
  | { readonly type: "delta"; readonly text: string }
  | { readonly type: "tool"; readonly name: string }

/** Where a turn's events go; each is awaited before the turn goes on. */
export type RunSink = (event: RunEvent) => Effect.Effect<void>

/**
 * Whether `sink` stores the events it is given (the event log's, `event-log.ts`): then the run
 * stores its `start` (id 1) itself, in the transaction that records its execution, and the sink
 * sends it without storing it again. Every `start` comes from `runExecution`.
 */
export const storesEvents = (sink: RunSink): boolean => (sink as { readonly storesEvents?: boolean }).storesEvents === true

/** How an execution interrupted from outside is recorded: its status and error. */
export interface InterruptedOutcome {
  readonly status: "cancelled" | "failed"
  readonly error: string
}

/**
 * How `runExecution` records an execution whose fiber is interrupted: by default a client that went
 * away (`cancelled`); runs that outlive their connection set it to the server stopping (`failed`),
 * the only thing that interrupts them besides a cancel request (recorded as such).
 */
export const RunInterruption: FiberRef.FiberRef<InterruptedOutcome> = FiberRef.unsafeMake<InterruptedOutcome>({
  status: "cancelled",
  error: cancelledByClient
})

/** The outcome of a run stopped by a closing server. */
export const stoppedByServerOutcome: InterruptedOutcome = { status: "failed", error: stoppedByServer }
