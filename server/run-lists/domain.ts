/** The organization's lists of runs as the contract shows them: conversations with who started them, and an export's lines. */
import { Schema } from "effect"
import { DateTime } from "../platform/schema.js"
import { Conversation, Execution, Message } from "../runtime/runs/domain.js"

/** Who started a conversation: an organization key, a member (personal key or MCP sign-in), an end user at a Portal, or not recorded. */
export const StartedBy = Schema.Struct({
  type: Schema.Literal("api_key", "member", "end_user", "unrecorded").annotations({
    description: "`unrecorded`: a conversation started before svc recorded who started it (not at a Portal)."
  }),
  apiKeyId: Schema.NullOr(Schema.String).annotations({ description: "The key used (`api_key` and `member`)." }),
  memberId: Schema.NullOr(Schema.String).annotations({ description: "The member (`member`)." }),
  endUserId: Schema.NullOr(Schema.String).annotations({ description: "The end user (`end_user`)." }),
  portalId: Schema.NullOr(Schema.String).annotations({ description: "The Portal the end user talked through (`end_user`)." })
}).annotations({ identifier: "ConversationStarter" })
export type StartedBy = typeof StartedBy.Type

const { createdAt, id, targetId, targetKind } = Conversation.fields

/** A conversation as the organization's list shows it: a conversation's fields, who started it, its turns and last activity. */
export const ConversationSummary = Schema.Struct({
  id,
  targetKind,
  targetId,
  startedBy: StartedBy,
  turnCount: Schema.Int.annotations({ description: "Its executions, one per turn (failed and cancelled ones included)." }),
  lastActivityAt: DateTime.annotations({ description: "When a turn last started or stored its reply: the list's order." }),
  createdAt
}).annotations({ identifier: "ConversationSummary" })
export type ConversationSummary = typeof ConversationSummary.Type

/** One line of a conversation's export: a message. */
export const ExportedMessage = Schema.Struct({ type: Schema.Literal("message"), ...Message.fields }).annotations({ identifier: "ExportedMessage" })
export type ExportedMessage = typeof ExportedMessage.Type

/** One line of a conversation's export: an execution (tool arguments included), on the line before its first message. */
export const ExportedExecution = Schema.Struct({ type: Schema.Literal("execution"), ...Execution.fields }).annotations({ identifier: "ExportedExecution" })
export type ExportedExecution = typeof ExportedExecution.Type

/** One line of a conversation's export. */
export type ExportLine = ExportedMessage | ExportedExecution
