/**
 * Runs of Agents: a conversation turn on the published version (or the draft), with the Agent's
 * Knowledgebases as the search tool, the history restored from the conversation, one execution per
 * turn and one credit per execution. Knows nothing of HTTP; events go to the caller's sink (SSE).
 *
 * A turn: the checks (the Agent, the conversation, a credit left) read and write nothing; then,
 * holding the conversation's lock, one short transaction reserves the credit (one conditional
 * UPDATE), creates the conversation when new, writes the execution `running` and the user's
 * message; the model runs outside any transaction; a second short transaction stores the reply and
 * finishes the execution `succeeded`, or finishes it `failed` / `cancelled` and gives the credit back.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, Option } from "effect"
import type { Principal } from "../../platform/accounts/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InsufficientCredits, InsufficientScope, InvalidRequest, NotFound, RunFailed } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors, type Page } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { SearchService } from "../../knowledge/search/service.js"
import { AgentRepo } from "../../builder/agents/repo.js"
import { parseAgentDefinition } from "../../builder/agents/definition.js"
import type { AgentDefinition } from "../../builder/agents/domain.js"
import type { ChatTurn, ToolCall, TurnSink, TurnStep } from "../model.js"
import { ModelRuntime } from "../service.js"
import type { Conversation, ConversationReply, ConversationTurn, Execution, Message } from "./domain.js"
import { knowledgeTool } from "./knowledge-tool.js"
import { type ExecutionRow, type MessageRow, RunRepo } from "./repo.js"
import { abandonedByServer, cancelledByClient } from "./reasons.js"
import { makeTurnLocks } from "./turn-locks.js"
import { FlowRunService } from "../flow-runs/service.js"

/**
 * What a streamed turn reports: its start (before the model answers; a run without a conversation,
 * such as a Flow run on inputs, has no `conversation_id`), text as it arrives, tools as they run.
 */
export type RunEvent =
  | { readonly type: "start"; readonly executionId: string; readonly conversation_id: string }
  | { readonly type: "start"; readonly executionId: string }
  | { readonly type: "delta"; readonly text: string }
  | { readonly type: "tool"; readonly name: string }

/** Where a turn's events go; each is awaited before the turn goes on. */
export type RunSink = (event: RunEvent) => Effect.Effect<void>

/** A turn that passed its checks and may run. */
export interface PreparedTurn {
  readonly actor: Principal
  readonly agentId: string
  /** The published version; null for a draft run. */
  readonly version: number | null
  readonly draft: boolean
  readonly definition: AgentDefinition
  readonly message: string
  /** The conversation continued; null starts a new one. */
  readonly conversationId: string | null
}

export { abandonedByServer, cancelledByClient } from "./reasons.js"

const notFound = (what: string, id: string) => new NotFound({ message: `No ${what} '${id}' in this organization.` })
const noCredits = () =>
  new InsufficientCredits({ message: "This organization has no credits left; a run costs one credit. Nothing ran and nothing was charged." })
const executeScopeOf = { agent: "agents:execute", app: "apps:execute", flow: "flows:execute" } as const

/** An execution as the contract shows it; `summary` leaves out tool arguments. */
export const toExecution = (row: ExecutionRow, summary = false): Execution => ({
  id: row.id,
  kind: row.kind,
  targetId: row.target_id,
  version: row.version,
  draft: row.draft === 1,
  conversationId: row.conversation_id,
  status: row.status,
  steps: JSON.parse(row.steps) as Execution["steps"],
  toolsCalled: (JSON.parse(row.tools_called) as Array<ToolCall>).map((call) => (summary ? { name: call.name } : call)),
  creditsCharged: row.credits_charged,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  error: row.error
})

const toMessage = (row: MessageRow): Message => ({
  id: row.id,
  role: row.role,
  text: row.text,
  executionId: row.execution_id,
  createdAt: row.created_at
})

/** Conversation turns, executions and conversation reads. */
export class RunService extends Effect.Service<RunService>()("svc/RunService", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* RunRepo
    const agents = yield* AgentRepo
    const search = yield* SearchService
    const runtime = yield* ModelRuntime
    const flowRuns = yield* FlowRunService
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const inTransaction = transactionsOn(sql)
    const locks = makeTurnLocks()
    const now = () => isoAt(clock.now())

    /** The checks of a turn; nothing is written. */
    const prepareAgentTurn = (
      actor: Principal,
      agentId: string,
      body: ConversationTurn,
      options: { readonly draft: boolean }
    ): Effect.Effect<PreparedTurn, NotFound | InsufficientCredits> =>
      Effect.gen(function* () {
        const org = actor.organization.id
        let version: number | null = null
        let definition: AgentDefinition
        if (options.draft) {
          const item = yield* agents.item(org, agentId)
          if (!item) return yield* notFound("Agent", agentId)
          definition = parseAgentDefinition(item.draft)
        } else {
          const published = yield* agents.published(org, agentId)
          if (!published) return yield* notFound("published Agent", agentId)
          definition = parseAgentDefinition(published.definition)
          version = published.version
        }
        const conversationId = body.conversation_id ?? null
        if (conversationId !== null) {
          const conversation = yield* repo.conversation(org, conversationId)
          if (!conversation || conversation.target_kind !== "agent" || conversation.target_id !== agentId) {
            return yield* notFound("conversation of this Agent", conversationId)
          }
        }
        if ((yield* repo.creditsLeft(org)) <= 0) return yield* noCredits()
        return { actor, agentId, version, draft: options.draft, definition, message: body.message, conversationId }
      })

    /** Writes the execution `running` and the user's message, reserving the credit; answers the history before it. */
    const begin = (turn: PreparedTurn, conversationId: string, executionId: string) =>
      inTransaction(
        Effect.gen(function* () {
          const org = turn.actor.organization.id
          if (!(yield* repo.takeCredit(org))) return yield* noCredits()
          const at = now()
          if (turn.conversationId === null) {
            yield* repo.insertConversation({
              id: conversationId,
              organization_id: org,
              target_kind: "agent",
              target_id: turn.agentId,
              created_at: at,
              updated_at: at
            })
          }
          const history = yield* repo.history(conversationId)
          yield* repo.insertExecution({
            id: executionId,
            organizationId: org,
            kind: "agent",
            targetId: turn.agentId,
            version: turn.version,
            draft: turn.draft,
            conversationId,
            creditsCharged: 1,
            startedAt: at
          })
          yield* repo.appendMessage({ id: newId(), conversationId, role: "user", text: turn.message, executionId, at })
          yield* repo.touchConversation(conversationId, at)
          return history.map((row): ChatTurn => ({ role: row.role, text: row.text }))
        })
      )

    /** Finishes the execution; a reply (whole or partial) is stored as the assistant's message; a run not succeeded gives its credit back. */
    const finish = (
      turn: PreparedTurn,
      conversationId: string,
      executionId: string,
      outcome: {
        readonly status: "succeeded" | "failed" | "cancelled"
        readonly reply: string
        readonly steps: ReadonlyArray<TurnStep>
        readonly toolsCalled: ReadonlyArray<ToolCall>
        readonly error: string | null
      }
    ) =>
      inTransaction(
        Effect.gen(function* () {
          const at = now()
          const succeeded = outcome.status === "succeeded"
          if (!succeeded) yield* repo.returnCredit(turn.actor.organization.id)
          if (succeeded || (outcome.status === "cancelled" && outcome.reply !== "")) {
            yield* repo.appendMessage({ id: newId(), conversationId, role: "assistant", text: outcome.reply, executionId, at })
            yield* repo.touchConversation(conversationId, at)
          }
          yield* repo.finishExecution(executionId, {
            status: outcome.status,
            steps: JSON.stringify(outcome.steps),
            toolsCalled: JSON.stringify(outcome.toolsCalled),
            creditsCharged: succeeded ? 1 : 0,
            finishedAt: at,
            error: outcome.error
          })
        })
      )

    /**
     * Runs a prepared turn, holding its conversation's lock from reading the history to storing the
     * reply. Interrupting it (a client that went away) stops the model call and records the
     * execution `cancelled` with what was produced.
     */
    const runAgentTurn = (
      turn: PreparedTurn,
      onEvent: RunSink = () => Effect.void
    ): Effect.Effect<ConversationReply, RunFailed | InsufficientCredits> => {
      const conversationId = turn.conversationId ?? newId()
      const executionId = newId()
      return locks.withLock(
        conversationId,
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            const history = yield* begin(turn, conversationId, executionId)
            let partial = ""
            const steps: Array<TurnStep> = []
            const toolsCalled: Array<ToolCall> = []
            const sink: TurnSink = (event) => {
              if (event.type === "step") return Effect.sync(() => void steps.push(event.step))
              if (event.type === "tool") {
                toolsCalled.push({ name: event.name, arguments: event.arguments })
                return onEvent({ type: "tool", name: event.name })
              }
              partial += event.text
              return onEvent({ type: "delta", text: event.text })
            }
            const { knowledgebaseIds } = turn.definition
            const flowTools = yield* flowRuns.flowTools(turn.actor, turn.definition.flowIds)
            const tools = [...(knowledgebaseIds.length === 0 ? [] : [knowledgeTool(search, turn.actor, knowledgebaseIds)]), ...flowTools]
            const exit = yield* Effect.exit(
              restore(
                Effect.zipRight(
                  onEvent({ type: "start", executionId, conversation_id: conversationId }),
                  runtime.runTurn(
                    { model: turn.definition.model, instructions: turn.definition.instructions, history, message: turn.message, tools },
                    sink
                  )
                )
              )
            )
            if (Exit.isSuccess(exit)) {
              const result = exit.value
              const { reply, steps: taken, toolsCalled: called } = result
              yield* finish(turn, conversationId, executionId, { status: "succeeded", reply, steps: taken, toolsCalled: called, error: null })
              return { reply: result.reply, conversation_id: conversationId, executionId }
            }
            const failure = Cause.failureOption(exit.cause)
            const status = Option.isNone(failure) && Cause.isInterruptedOnly(exit.cause) ? "cancelled" : "failed"
            const error = Option.isSome(failure)
              ? failure.value.message
              : status === "cancelled"
                ? cancelledByClient
                : "The run failed on the server."
            yield* finish(turn, conversationId, executionId, { status, reply: partial, steps, toolsCalled, error })
            return yield* Effect.failCause(exit.cause)
          })
        )
      )
    }

    /** A conversation of the organization whose target kind's `:execute` scope the caller holds. */
    const readableConversation = (actor: Principal, id: string) =>
      Effect.gen(function* () {
        const row = yield* repo.conversation(actor.organization.id, id)
        if (!row) return yield* notFound("conversation", id)
        const needed = executeScopeOf[row.target_kind]
        if (!actor.scopes.has(needed)) return yield* new InsufficientScope({ message: `Reading this conversation needs the scope '${needed}'.` })
        return row
      })

    return {
      prepareAgentTurn,
      runAgentTurn,

      /**
       * Finishes the executions a stopped server left `running` as `failed`, giving their reserved
       * credits back (run at start-up, before any turn); answers how many there were.
       */
      recoverAbandoned: inTransaction(
        Effect.gen(function* () {
          const abandoned = yield* repo.running()
          const at = now()
          for (const execution of abandoned) {
            if (execution.credits_charged > 0) yield* repo.returnCredit(execution.organization_id)
            yield* repo.abandon(execution.id, at, abandonedByServer)
          }
          return abandoned.length
        })
      ),

      /** An execution of the caller's organization; `summary` leaves out tool arguments. */
      execution: (actor: Principal, id: string, summary: boolean): Effect.Effect<Execution, NotFound> =>
        Effect.flatMap(repo.execution(actor.organization.id, id), (row) =>
          row ? Effect.succeed(toExecution(row, summary)) : Effect.fail(notFound("execution", id))
        ),

      /** A conversation of the caller's organization; reading it needs the `:execute` scope of its target's kind. */
      conversation: (actor: Principal, id: string): Effect.Effect<Conversation, NotFound | InsufficientScope> =>
        Effect.map(readableConversation(actor, id), (row) => ({
          id: row.id,
          targetKind: row.target_kind,
          targetId: row.target_id,
          createdAt: row.created_at,
          updatedAt: row.updated_at
        })),

      /** One page of a conversation's messages, oldest first. */
      messages: (
        actor: Principal,
        id: string,
        params: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
      ): Effect.Effect<Page<Message>, NotFound | InsufficientScope | InvalidRequest> =>
        Effect.gen(function* () {
          const row = yield* readableConversation(actor, id)
          const list = `messages:${row.id}`
          const page = yield* cursors.request(list, params)
          const rows = yield* repo.messages(row.id, page)
          const built = cursors.page(list, page, rows, (message) => [message.sequence])
          return { items: built.items.map(toMessage), nextCursor: built.nextCursor }
        })
    }
  }),
  dependencies: [RunRepo.Default, AgentRepo.Default, Cursors.Default, SearchService.Default, ModelRuntime.Default, FlowRunService.Default]
}) {}
