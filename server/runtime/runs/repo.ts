/** SQL of runs: conversations, their messages, executions and the organization's credits. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import {
  appendMessageTx,
  finishExecutionTx,
  historyTx,
  insertConversationTx,
  insertExecutionTx,
  type NewMessage,
  touchConversationTx
} from "./turn-writes.js"
import type { ExecutionKind, ExecutionStatus, TargetKind } from "./domain.js"

/** A conversation row. */
export interface ConversationRow {
  readonly id: string
  readonly organization_id: string
  readonly target_kind: TargetKind
  readonly target_id: string
  readonly created_at: string
  readonly updated_at: string
}

/** A message row. */
export interface MessageRow {
  readonly id: string
  readonly sequence: number
  readonly role: "user" | "assistant"
  readonly text: string
  readonly execution_id: string | null
  readonly created_at: string
}

/** An execution row. */
export interface ExecutionRow {
  readonly id: string
  readonly kind: ExecutionKind
  readonly target_id: string
  readonly version: number | null
  readonly draft: number
  readonly conversation_id: string | null
  readonly status: ExecutionStatus
  readonly steps: string
  readonly tools_called: string
  readonly credits_charged: number
  readonly started_at: string
  readonly finished_at: string | null
  readonly error: string | null
}

/** A new execution, written `running`. */
export interface NewExecution {
  readonly id: string
  readonly organizationId: string
  readonly kind: ExecutionKind
  readonly targetId: string
  readonly version: number | null
  readonly draft: boolean
  readonly conversationId: string | null
  readonly creditsCharged: number
  readonly startedAt: string
}

/** How an execution ended. */
export interface ExecutionOutcome {
  readonly status: Exclude<ExecutionStatus, "running">
  readonly steps: string
  readonly toolsCalled: string
  readonly creditsCharged: number
  readonly finishedAt: string
  readonly error: string | null
}

/** Runs in SQL: writes on the write connection (inside the caller's transaction), reads on the read connection. */
export class RunRepo extends Effect.Service<RunRepo>()("svc/RunRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    const reader = yield* ReadConnection
    const first = <A>(rows: ReadonlyArray<A>) => rows[0] ?? null

    return {
      /** The organization's credits left (read connection). */
      creditsLeft: (organizationId: string) =>
        Effect.orDie(
          reader
            .all<{ credits_remaining: number }>("SELECT credits_remaining FROM organizations WHERE id = ?", [organizationId])
            .pipe(Effect.map((rows) => rows[0]?.credits_remaining ?? 0))
        ),

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

      /** Executions still `running` (write connection): at start-up, runs a stopped server never finished. */
      running: () =>
        Effect.orDie(sql<{
          id: string
          organization_id: string
          credits_charged: number
          credit_subscription_id: string | null
          credit_pool: "bonus" | "allowance" | null
        }>`SELECT id, organization_id, credits_charged, credit_subscription_id, credit_pool
          FROM executions WHERE status = 'running' ORDER BY started_at, id`),

      /** Finishes an abandoned execution `failed`, charging nothing and keeping what it recorded. */
      abandon: (id: string, at: string, error: string) =>
        Effect.orDie(
          sql`UPDATE executions SET status = 'failed', credits_charged = 0, finished_at = ${at}, error = ${error} WHERE id = ${id}`
        ),

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
