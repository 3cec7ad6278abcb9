/**
 * An execution's trace as the contract shows it (`GET /executions/{id}?view=full`, MCP's
 * `get_execution` in full view): timed spans in the order they started, each with the fields of
 * its kind (`server/runtime/trace.ts` records them; `docs/decisions.md`, "Traces of executions").
 */
import { Schema } from "effect"
import { DateTime } from "../../platform/schema.js"
import { Citation } from "../../knowledge/search/domain.js"

/** A text of a trace, cut at 2,000 characters (`truncated` then true). */
const TracedText = Schema.Struct({ text: Schema.String, truncated: Schema.Boolean }).annotations({ identifier: "TracedText" })

/** The messages one model call was sent. */
const TracedMessages = Schema.Struct({
  count: Schema.Int,
  byRole: Schema.Struct({ system: Schema.Int, user: Schema.Int, assistant: Schema.Int, tool: Schema.Int }),
  sent: Schema.Array(
    Schema.Struct({ role: Schema.Literal("system", "user", "assistant", "tool"), text: Schema.String, truncated: Schema.Boolean })
  ).annotations({ description: "The last 20 messages sent, with their text (all are counted in `count`)." })
}).annotations({ identifier: "TracedMessages" })

/** A passage a search answered. */
const TracedPassage = Schema.Struct({
  text: Schema.String,
  truncated: Schema.Boolean,
  source: Schema.String,
  section: Schema.NullOr(Schema.String),
  score: Schema.Number,
  citation: Citation
}).annotations({ identifier: "TracedPassage" })

/** One span of a trace. */
export const TraceSpan = Schema.Struct({
  id: Schema.String,
  parentId: Schema.NullOr(Schema.String).annotations({ description: "The span this one ran inside; null at the top." }),
  kind: Schema.Literal("model", "tool", "route", "validation"),
  name: Schema.String.annotations({ description: "The model, the tool, the member routed to, or `output` for a validation." }),
  startedAt: DateTime,
  finishedAt: DateTime,
  durationMs: Schema.Number,
  status: Schema.Literal("ok", "error"),
  error: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  provider: Schema.optional(Schema.Literal("builtin", "openai")),
  messages: Schema.optional(TracedMessages),
  tokensIn: Schema.optional(Schema.NullOr(Schema.Int).annotations({ description: "Tokens sent, as the provider reported them; null when it reported none." })),
  tokensOut: Schema.optional(Schema.NullOr(Schema.Int).annotations({ description: "Tokens answered, as the provider reported them; null when it reported none." })),
  reply: Schema.optional(TracedText),
  toolCalls: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, arguments: Schema.Unknown }))),
  arguments: Schema.optional(Schema.Unknown),
  result: Schema.optional(TracedText),
  passages: Schema.optional(Schema.Array(TracedPassage)),
  route: Schema.optional(
    Schema.Struct({
      member: Schema.Struct({ kind: Schema.Literal("agent", "flow"), id: Schema.String, name: Schema.String, version: Schema.Int }),
      by: Schema.Literal("description", "first", "model"),
      matched: Schema.Array(Schema.String)
    })
  ),
  validation: Schema.optional(
    Schema.Struct({ schema: Schema.Literal("output"), valid: Schema.Boolean, problems: Schema.Array(Schema.String) })
  )
}).annotations({ identifier: "TraceSpan" })

/** The trace of an execution: its spans in the order they started. */
export const ExecutionTrace = Schema.Struct({
  spans: Schema.Array(TraceSpan),
  truncated: Schema.Boolean.annotations({ description: "True when spans beyond the 200 kept were dropped." })
}).annotations({
  identifier: "ExecutionTrace",
  description:
    "Each step in order with its timing: model calls (model, messages sent, tokens in and out where reported, reply), tool calls (arguments, result; a search's passages with citations and scores), an App's routing decision, a transaction's output validation. Null while the execution runs and for executions older than traces."
})
