/** What a run reports as it goes, for streaming: shared by every kind of run. */
import type { Effect } from "effect"

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
