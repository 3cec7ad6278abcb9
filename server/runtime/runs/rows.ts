/** The rows of conversations, messages and executions, as the run repository and its write bodies read them. */
import type { ExecutionKind, ExecutionStatus, TargetKind } from "./domain.js"

/** A conversation row. */
export interface ConversationRow {
  readonly id: string
  readonly organization_id: string
  readonly target_kind: TargetKind
  readonly target_id: string
  readonly created_at: string
  readonly updated_at: string
  /** The API key of the caller that created it (null before migration 0023). */
  readonly started_by_key_id: string | null
  /** The member of that key, for a personal key or an MCP sign-in (else null). */
  readonly started_by_member_id: string | null
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
  /** The instance running it (`InstanceRegistry.claimant`). */
  readonly claimedBy: string
}

/** How an execution ended. */
export interface ExecutionOutcome {
  readonly status: Exclude<ExecutionStatus, "running">
  readonly steps: string
  readonly toolsCalled: string
  readonly creditsCharged: number
  readonly finishedAt: string
  readonly error: string | null
  /** Its trace (`trace.ts`) as JSON text, read by `view=full`. */
  readonly trace: string
}
