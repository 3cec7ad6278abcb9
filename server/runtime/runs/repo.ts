/** SQL of runs: conversations, their messages, executions and the organization's credits. */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { organizationCreditsLeft } from "../../identity/credit-repo.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import {
  appendMessageTx,
  finishExecutionTx,
  historyTx,
  insertConversationTx,
  insertExecutionTx,
  type NewMessage,
  touchConversationTx
} from "./turn-repo.js"
import type { ConversationRow, ExecutionOutcome, ExecutionRow, MessageRow, NewExecution } from "./rows.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const executionsWrites = declareWrites("executions")

export type { ConversationRow, ExecutionOutcome, ExecutionRow, MessageRow, NewExecution } from "./rows.js"

/** A running execution as recovery sees it: whose credit it holds. */
export interface AbandonedExecution {
  readonly id: string
  readonly organization_id: string
  readonly credits_charged: number
  readonly credit_subscription_id: string | null
  readonly credit_pool: "bonus" | "allowance" | null
}

/** Runs in SQL: writes on the write connection (inside the caller's transaction), reads on the read connection. */
export class RunRepo extends Effect.Service<RunRepo>()("svc/RunRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    const reader = yield* ReadConnection
    const first = <A>(rows: ReadonlyArray<A>) => rows[0] ?? null

    return {
      /** How many conversations the organization has. */
      countConversations: (organizationId: string) => organizationRowCount(sql, "conversations", organizationId),
      /** How many executions (runs of every kind) the organization has. */
      countExecutions: (organizationId: string) => organizationRowCount(sql, "executions", organizationId),
      /** The organization's credits left (read connection). */
      creditsLeft: (organizationId: string) => organizationCreditsLeft(reader, organizationId),

      /** A conversation of the organization (read connection), or null. */
      conversation: (organizationId: string, id: string) =>
        Effect.orDie(
          reader
            .all<ConversationRow>("SELECT * FROM conversations WHERE organization_id = ? AND id = ?", [organizationId, id])
            .pipe(Effect.map(first))
        ),

      /** Inserts a conversation. */
      insertConversation: (row: ConversationRow) => statements(insertConversationTx(row)),

      /** Marks a conversation changed. */
      touchConversation: (id: string, at: string) => statements(touchConversationTx(id, at)),

      /** Every message of a conversation, oldest first (write connection, inside the turn). */
      history: (conversationId: string) => statements(historyTx(conversationId)),

      /**
       * Appends a message at the conversation's next position. The position is unique per
       * conversation, so a second writer that read the same maximum fails instead of interleaving.
       */
      appendMessage: (message: NewMessage) => statements(appendMessageTx(message)),

      /** Up to `limit + 1` messages of a conversation after a position, oldest first (read connection). */
      messages: (conversationId: string, page: PageRequest) =>
        Effect.orDie(
          reader.all<MessageRow>(
            `SELECT id, sequence, role, text, execution_id, created_at FROM messages
              WHERE conversation_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`,
            [conversationId, page.after === null ? 0 : Number(page.after[0]), page.limit + 1]
          )
        ),

      /** Inserts a `running` execution. */
      insertExecution: (execution: NewExecution) => statements(insertExecutionTx(execution)),

      /** Records how an execution ended. */
      finishExecution: (id: string, outcome: ExecutionOutcome) => statements(finishExecutionTx(id, outcome)),

      /**
       * Executions still `running` whose claim `claim` selects (an `InstanceRegistry` condition),
       * on the write connection: runs a stopped or gone instance never finished.
       */
      running: (claim: Fragment) =>
        Effect.orDie(sql<AbandonedExecution>`SELECT id, organization_id, credits_charged, credit_subscription_id, credit_pool
          FROM executions WHERE status = 'running' AND ${claim} ORDER BY started_at, id`),

      /**
       * Finishes an abandoned execution `failed`, charging nothing and keeping what it recorded;
       * false when it is no longer running (another instance finished or recovered it first).
       */
      abandon: (id: string, at: string, error: string) =>
        Effect.orDie(
          sql<{ id: string }>`UPDATE executions SET status = 'failed', credits_charged = 0, finished_at = ${at}, error = ${error}
            WHERE id = ${id} AND status = 'running' RETURNING id`.pipe(writing(executionsWrites))
        ).pipe(Effect.map((rows) => rows.length === 1)),

      /** An execution of the organization (read connection), or null. */
      execution: (organizationId: string, id: string) =>
        Effect.orDie(
          reader
            .all<ExecutionRow>(
              `SELECT id, kind, target_id, version, draft, conversation_id, status, steps, tools_called, credits_charged,
                started_at, finished_at, error FROM executions WHERE organization_id = ? AND id = ?`,
              [organizationId, id]
            )
            .pipe(Effect.map(first))
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
