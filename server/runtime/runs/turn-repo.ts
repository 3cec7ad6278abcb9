/**
 * The SQL of a turn's writes as transaction body steps (`WriteTransactions`): conversations,
 * messages and executions. Each is the only copy of its statement; `RunRepo`'s Effect methods run
 * the same steps inside their callers' `@effect/sql` transactions.
 */
import { type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import type { ConversationRow, ExecutionOutcome, MessageRow, NewExecution } from "./rows.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const conversationsWrites = declareWrites("conversations")
const executionsWrites = declareWrites("executions")
const messagesWrites = declareWrites("messages")

/** A message to append to a conversation. */
export interface NewMessage {
  readonly id: string
  readonly conversationId: string
  readonly role: "user" | "assistant"
  readonly text: string
  readonly executionId: string
  readonly at: string
}

/** Stores a new conversation. */
export function* insertConversationTx(row: ConversationRow): TxBody<void> {
  yield* txRun(
    `INSERT INTO conversations (id, organization_id, target_kind, target_id, created_at, updated_at, started_by_key_id, started_by_member_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [row.id, row.organization_id, row.target_kind, row.target_id, row.created_at, row.updated_at, row.started_by_key_id, row.started_by_member_id],
    conversationsWrites
  )
}

/** Marks a conversation changed. */
export function* touchConversationTx(id: string, at: string): TxBody<void> {
  yield* txRun("UPDATE conversations SET updated_at = ? WHERE id = ?", [at, id], conversationsWrites)
}

/** Every message of a conversation, oldest first (inside the turn). */
export function* historyTx(conversationId: string): TxBody<ReadonlyArray<MessageRow>> {
  return yield* txAll<MessageRow>(
    "SELECT id, sequence, role, text, execution_id, created_at FROM messages WHERE conversation_id = ? ORDER BY sequence",
    [conversationId]
  )
}

/**
 * Appends a message at the conversation's next position. The position is unique per
 * conversation, so a second writer that read the same maximum fails instead of interleaving.
 */
export function* appendMessageTx(message: NewMessage): TxBody<void> {
  yield* txRun(
    `INSERT INTO messages (id, conversation_id, sequence, role, text, execution_id, created_at)
     SELECT ?, ?, COALESCE(MAX(sequence), 0) + 1, ?, ?, ?, ? FROM messages WHERE conversation_id = ?`,
    [message.id, message.conversationId, message.role, message.text, message.executionId, message.at, message.conversationId],
    messagesWrites
  )
}

/** Stores an execution `running`. */
export function* insertExecutionTx(execution: NewExecution): TxBody<void> {
  yield* txRun(
    `INSERT INTO executions (id, organization_id, kind, target_id, version, draft, conversation_id, status, steps, tools_called,
       credits_charged, started_at, finished_at, error, claimed_by) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', '[]', '[]', ?, ?, NULL, NULL, ?)`,
    [
      execution.id,
      execution.organizationId,
      execution.kind,
      execution.targetId,
      execution.version,
      execution.draft ? 1 : 0,
      execution.conversationId,
      execution.creditsCharged,
      execution.startedAt,
      execution.claimedBy
    ],
    executionsWrites
  )
}

/**
 * Records how a running execution ended, with its trace; false (nothing written) when it is no
 * longer running: the recovery of another instance took it over, judging this one gone.
 */
export function* finishExecutionTx(id: string, outcome: ExecutionOutcome): TxBody<boolean> {
  const rows = yield* txAll<{ id: string }>(
    "UPDATE executions SET status = ?, steps = ?, tools_called = ?, credits_charged = ?, finished_at = ?, error = ?, trace = ? WHERE id = ? AND status = 'running' RETURNING id",
    [
      outcome.status,
      outcome.steps,
      outcome.toolsCalled,
      outcome.creditsCharged,
      outcome.finishedAt,
      outcome.error,
      outcome.trace,
      id
    ],
    executionsWrites
  )
  return rows.length === 1
}
