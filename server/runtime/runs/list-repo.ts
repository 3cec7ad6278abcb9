/**
 * SQL of the organization's lists of runs (issue 25): conversations newest activity first with who
 * started them and their turn counts, executions newest activity first, and the executions a page
 * of an export names. Reads only, on the read connection; keyset pages of `limit + 1` rows.
 */
import { Effect } from "effect"
import type { PageRequest } from "../../platform/pagination.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import type { ExecutionKind, ExecutionStatus, TargetKind } from "./domain.js"
import type { ConversationRow, ExecutionRow } from "./rows.js"

/** A conversation as the list shows it: its row (the organization is the list's) and its turn count. */
export interface ConversationListRow extends Omit<ConversationRow, "organization_id"> {
  readonly turn_count: number
}

/** Which conversations a list holds. */
export interface ConversationFilter {
  /** The target kinds listed (never empty). */
  readonly kinds: ReadonlyArray<TargetKind>
  readonly targetId: string | null
  /** Active at or after (ISO 8601, UTC). */
  readonly since: string | null
  /** Only those this member started (a non-admin personal key); null for everyone's. */
  readonly startedByMember: string | null
  /** Only these conversations (an end user's); null for any. */
  readonly ids: ReadonlyArray<string> | null
}

/** Which executions a list holds. */
export interface ExecutionFilter {
  /** The kinds listed (never empty). */
  readonly kinds: ReadonlyArray<ExecutionKind>
  readonly status: ExecutionStatus | null
  /** Last activity at or after (ISO 8601, UTC). */
  readonly since: string | null
}

/** An execution row with its last activity (`finished_at`, else `started_at`), the list's order. */
export interface ExecutionListRow extends ExecutionRow {
  readonly activity_at: string
}

const executionColumns = `id, kind, target_id, version, draft, conversation_id, status, steps, tools_called, credits_charged,
  started_at, finished_at, error`
const marks = (values: ReadonlyArray<unknown>) => values.map(() => "?").join(", ")

/** The organization's conversations and executions as lists. */
export class RunListRepo extends Effect.Service<RunListRepo>()("svc/RunListRepo", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection
    return {
      /** Up to `limit + 1` conversations of the organization, newest activity first (`[updated_at, id]` positions). */
      conversations: (organizationId: string, filter: ConversationFilter, page: PageRequest) => {
        const where: Array<string> = ["c.organization_id = ?", `c.target_kind IN (${marks(filter.kinds)})`]
        const params: Array<unknown> = [organizationId, ...filter.kinds]
        if (filter.targetId !== null) where.push("c.target_id = ?"), params.push(filter.targetId)
        if (filter.since !== null) where.push("c.updated_at >= ?"), params.push(filter.since)
        if (filter.startedByMember !== null) where.push("c.started_by_member_id = ?"), params.push(filter.startedByMember)
        if (filter.ids !== null) where.push(filter.ids.length === 0 ? "1 = 0" : `c.id IN (${marks(filter.ids)})`), params.push(...filter.ids)
        if (page.after !== null) where.push("(c.updated_at < ? OR (c.updated_at = ? AND c.id < ?))"), params.push(page.after[0], page.after[0], page.after[1])
        return Effect.orDie(
          Effect.map(
            reader.all<ConversationListRow>(
              `SELECT c.id, c.target_kind, c.target_id, c.created_at, c.updated_at, c.started_by_key_id, c.started_by_member_id,
                 (SELECT count(*) FROM executions e WHERE e.conversation_id = c.id) AS turn_count
               FROM conversations c WHERE ${where.join(" AND ")} ORDER BY c.updated_at DESC, c.id DESC LIMIT ?`,
              [...params, page.limit + 1]
            ),
            // PostgreSQL answers count(*) as a bigint string.
            (rows) => rows.map((row) => ({ ...row, turn_count: Number(row.turn_count) }))
          )
        )
      },

      /** Up to `limit + 1` executions of the organization, newest activity first (`[activity_at, id]` positions). */
      executions: (organizationId: string, filter: ExecutionFilter, page: PageRequest) => {
        const activity = "COALESCE(finished_at, started_at)"
        const where: Array<string> = ["organization_id = ?", `kind IN (${marks(filter.kinds)})`]
        const params: Array<unknown> = [organizationId, ...filter.kinds]
        if (filter.status !== null) where.push("status = ?"), params.push(filter.status)
        if (filter.since !== null) where.push(`${activity} >= ?`), params.push(filter.since)
        if (page.after !== null) where.push(`(${activity} < ? OR (${activity} = ? AND id < ?))`), params.push(page.after[0], page.after[0], page.after[1])
        return Effect.orDie(
          reader.all<ExecutionListRow>(
            `SELECT ${executionColumns}, ${activity} AS activity_at FROM executions
              WHERE ${where.join(" AND ")} ORDER BY ${activity} DESC, id DESC LIMIT ?`,
            [...params, page.limit + 1]
          )
        )
      },

      /** The executions of a conversation among `ids` (those a page of its messages names). */
      conversationExecutions: (conversationId: string, ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.succeed([] as ReadonlyArray<ExecutionRow>)
          : Effect.orDie(
              reader.all<ExecutionRow>(`SELECT ${executionColumns} FROM executions WHERE conversation_id = ? AND id IN (${marks(ids)})`, [
                conversationId,
                ...ids
              ])
            )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
