/** App runs as the contract shows them: the conversation answer, the transaction body and answer. */
import { Schema } from "effect"
import { Uuid } from "../../platform/schema.js"

/** The answer of an App conversation turn (and the data of its streamed `done` event). */
export const AppConversationReply = Schema.Struct({
  reply: Schema.String,
  conversation_id: Uuid,
  greeting: Schema.NullOr(Schema.String).annotations({
    description: "The App's greeting on the first turn of a conversation (null when it has none); null on every later turn."
  }),
  executionId: Uuid
}).annotations({ identifier: "AppConversationReply" })
export type AppConversationReply = typeof AppConversationReply.Type

/** Body of `POST /apps/{id}/transaction`. */
export const TransactionRequest = Schema.Struct({
  input: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "Validated against the published App's `inputSchema` before anything runs."
  })
}).annotations({
  identifier: "TransactionRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" },
  examples: [{ input: { sku: "A-100" } }]
})
export type TransactionRequest = typeof TransactionRequest.Type

/** The answer of a transaction: its execution and the output, valid under the App's `outputSchema`. */
export const TransactionReply = Schema.Struct({
  executionId: Uuid,
  output: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "TransactionReply" })
export type TransactionReply = typeof TransactionReply.Type
