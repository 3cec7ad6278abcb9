/** Runs as the contract shows them: the conversation body and answer, executions, conversations and messages. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"
import { ExecutionTrace } from "./trace-schema.js"

/** Longest user message a turn takes. */
export const maxMessageChars = 32_000

/** What `detach` in a run body does. */
export const detachDescription =
  "true answers 202 `{executionId, conversation_id?}` once the run began; it runs to its end with nobody listening (follow it with `GET /executions/{id}/events`, stop it with `POST /executions/{id}/cancel`). Not with `stream: true`."

/** The answer of a run started with `detach: true` (202). */
export const DetachedRun = Schema.Struct({
  executionId: Uuid,
  conversation_id: Schema.optional(Uuid.annotations({ description: "The conversation of the turn (absent for a run outside a conversation)." }))
}).annotations({ identifier: "DetachedRun" })
export type DetachedRun = typeof DetachedRun.Type

/** Body of `POST /agents/{id}/conversation` and `POST /agents/{id}/draft/run`. */
export const ConversationTurn = Schema.Struct({
  message: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(maxMessageChars)).annotations({
    message: () => `message must be 1 to ${maxMessageChars} characters`,
    jsonSchema: { type: "string", minLength: 1, maxLength: maxMessageChars }
  }),
  conversation_id: Schema.optional(Uuid.annotations({ description: "Continues a conversation (returned by the first call)." })),
  stream: Schema.optional(
    Schema.Boolean.annotations({ description: "true answers `text/event-stream` (events `start`, `delta`, `tool`, then `done` or `error`)." })
  ),
  detach: Schema.optional(Schema.Boolean.annotations({ description: detachDescription }))
}).annotations({
  identifier: "ConversationTurn",
  parseOptions: { onExcessProperty: "error", errors: "all" },
  examples: [{ message: "How do refunds work?" }]
})
export type ConversationTurn = typeof ConversationTurn.Type

/** The answer of a conversation turn (and the data of its streamed `done` event). */
export const ConversationReply = Schema.Struct({
  reply: Schema.String,
  conversation_id: Uuid,
  executionId: Uuid
}).annotations({ identifier: "ConversationReply" })
export type ConversationReply = typeof ConversationReply.Type

/** What kind of run an execution is. */
export const ExecutionKind = Schema.Literal("agent", "flow", "app", "transaction")
export type ExecutionKind = typeof ExecutionKind.Type

/** Where an execution stands. */
export const ExecutionStatus = Schema.Literal("running", "succeeded", "failed", "cancelled")
export type ExecutionStatus = typeof ExecutionStatus.Type

/** One timed step of a run: a model call or a tool run. */
export const ExecutionStep = Schema.Struct({
  type: Schema.String,
  name: Schema.String,
  startedAt: DateTime,
  finishedAt: DateTime
}).annotations({ identifier: "ExecutionStep" })

/** A tool a run called; `arguments` is left out by `view=summary`. */
export const ToolCalled = Schema.Struct({
  name: Schema.String,
  arguments: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "ToolCalled" })

/** One run: what ran at which version, its steps and tools, credits, timings and outcome. */
export const Execution = Schema.Struct({
  id: Uuid,
  kind: ExecutionKind,
  targetId: Uuid,
  version: Schema.NullOr(Schema.Int).annotations({ description: "The published version that ran; null for a draft run." }),
  draft: Schema.Boolean,
  conversationId: Schema.NullOr(Uuid),
  status: ExecutionStatus,
  steps: Schema.Array(ExecutionStep),
  toolsCalled: Schema.Array(ToolCalled),
  creditsCharged: Schema.Int,
  startedAt: DateTime,
  finishedAt: Schema.NullOr(DateTime),
  error: Schema.NullOr(Schema.String),
  trace: Schema.optional(Schema.NullOr(ExecutionTrace).annotations({ description: "Only with `view=full`." }))
}).annotations({ identifier: "Execution" })
export type Execution = typeof Execution.Type

/** What a conversation talks to. */
export const TargetKind = Schema.Literal("agent", "app", "flow")
export type TargetKind = typeof TargetKind.Type

/** A conversation kept on the server. */
export const Conversation = Schema.Struct({
  id: Uuid,
  targetKind: TargetKind,
  targetId: Uuid,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "Conversation" })
export type Conversation = typeof Conversation.Type

/** One message of a conversation. */
export const Message = Schema.Struct({
  id: Uuid,
  role: Schema.Literal("user", "assistant"),
  text: Schema.String,
  executionId: Schema.NullOr(Uuid),
  createdAt: DateTime
}).annotations({ identifier: "Message" })
export type Message = typeof Message.Type
