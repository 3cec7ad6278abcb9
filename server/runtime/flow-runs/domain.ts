/** Flow runs as the contract shows them: the run body and the two answers (inputs, or a conversation turn). */
import { Schema } from "effect"
import { Uuid } from "../../platform/schema.js"
import { ConversationReply, detachDescription, maxMessageChars } from "../runs/domain.js"

/**
 * Body of `POST /flows/{id}/run` and `POST /flows/{id}/draft/run`. A Flow with questions takes
 * `inputs` (validated against its inputs schema by the service, every problem named); a Flow
 * without questions takes `message` and `conversation_id`, like an Agent.
 */
export const FlowRunRequest = Schema.Struct({
  inputs: Schema.optional(
    Schema.Unknown.annotations({
      description: "The answers keyed by parameter name, as the Flow's `inputsSchema` describes them.",
      jsonSchema: { type: "object" }
    })
  ),
  message: Schema.optional(
    Schema.String.annotations({
      description: "For a Flow without questions: the user's message.",
      jsonSchema: { type: "string", minLength: 1, maxLength: maxMessageChars }
    })
  ),
  conversation_id: Schema.optional(Uuid.annotations({ description: "For a Flow without questions: continues a conversation." })),
  stream: Schema.optional(
    Schema.Boolean.annotations({ description: "true answers `text/event-stream` (events `start`, `tool`, `delta`, then `done` or `error`)." })
  ),
  detach: Schema.optional(Schema.Boolean.annotations({ description: detachDescription }))
}).annotations({
  identifier: "FlowRunRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" },
  examples: [{ inputs: { company_name: "Acme" } }]
})
export type FlowRunRequest = typeof FlowRunRequest.Type

/** The answer of a Flow run with inputs: the rendered output and each step's variable. */
export const FlowRunResult = Schema.Struct({
  executionId: Uuid,
  output: Schema.String,
  variables: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "Each step's variable by step name, in step order."
  })
}).annotations({ identifier: "FlowRunResult" })
export type FlowRunResult = typeof FlowRunResult.Type

/** What a Flow run answers: `FlowRunResult`, or for a Flow without questions a conversation reply. */
export const FlowRunAnswer = Schema.Union(FlowRunResult, ConversationReply).annotations({ identifier: "FlowRunAnswer" })
export type FlowRunAnswer = typeof FlowRunAnswer.Type
