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
import { Cause, Effect, Exit, FiberRef, Option } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InsufficientCredits, InsufficientScope, InvalidRequest, NotFound, RunCancelled, RunFailed } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { InstanceRegistry, type RecoveryMoment } from "../../platform/instances/registry.js"
import { Cursors, type Page } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { WriteTransactions } from "../../platform/sql/write-fast-path.js"
import { SearchService } from "../../knowledge/search/service.js"
import { AgentRepo } from "../../builder/agents/repo.js"
import { parseAgentDefinition } from "../../builder/agents/definition.js"
import type { AgentDefinition } from "../../builder/agents/domain.js"
import { type ChatTurn, ReplyDelivery, type ToolCall, type TurnResult, type TurnSink, type TurnStep } from "../model.js"
import { ModelRuntime } from "../service.js"
import type { Conversation, ConversationReply, ConversationTurn, Execution, ExecutionKind, Message, TargetKind } from "./domain.js"
import { knowledgeTool } from "./knowledge-tool.js"
import { type ExecutionRow, type MessageRow, RunRepo } from "./repo.js"
import { abandonedByServer, cancelledByClient } from "./reasons.js"
import { SharedTurns } from "./shared-turns.js"
import { AgentFlowTools } from "./agent-tools.js"
import { type RunEvent, RunInterruption, type RunSink, storesEvents } from "./events.js"
import { insertRunEventsTx } from "./event-repo.js"
import { type CreditCharge, CreditRepo, type CreditSource, giveBackCreditTx, organizationCredits, recordChargeTx, takeCreditTx } from "./credit-repo.js"
import { appendMessageTx, finishExecutionTx, historyTx, insertConversationTx, insertExecutionTx, touchConversationTx } from "./turn-repo.js"
import { type ExecutionTrace, makeTraceRecorder, withTrace } from "../trace.js"
import { TraceRepo } from "./trace-repo.js"
import { TraceExport } from "../../platform/otel.js"

export type { RunEvent, RunSink } from "./events.js"

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

/**
 * What one execution is of: its kind, target and version, the message it answers, and, for a
 * conversation turn, the conversation's target kind and the conversation continued (null starts
 * one); `conversation: null` is a run without a conversation (a transaction).
 */
export interface RunTarget {
  readonly actor: Principal
  readonly kind: ExecutionKind
  readonly targetId: string
  /** The published version that runs; null for a draft run. */
  readonly version: number | null
  readonly draft: boolean
  readonly message: string
  readonly conversation: { readonly targetKind: TargetKind; readonly id: string | null } | null
  /** Whose credits the run spends; the organization's when absent. */
  readonly credit?: CreditSource | undefined
}

/** One step of an execution's record: a model call or a tool, or a step of a Flow. */
export interface ExecutionStepRecord {
  readonly type: string
  readonly name: string
  readonly startedAt: string
  readonly finishedAt: string
}

/** What an execution answered: the reply and its record (an Agent turn's `TurnResult` is one). */
export interface ExecutionResult {
  readonly reply: string
  readonly toolsCalled: ReadonlyArray<ToolCall>
  readonly steps: ReadonlyArray<ExecutionStepRecord>
}

/**
 * The record of an execution as it runs, kept if it is cut short: a producer that records its own
 * steps (a Flow) pushes them here; an Agent turn's steps and tools arrive through the sink.
 */
export interface ExecutionRecord {
  readonly steps: Array<ExecutionStepRecord>
  readonly toolsCalled: Array<ToolCall>
}

/** What answers an execution, given the conversation's history before it, the sink of its events and its record. */
export type TurnProducer<R extends ExecutionResult> = (
  history: ReadonlyArray<ChatTurn>,
  sink: TurnSink,
  record: ExecutionRecord
) => Effect.Effect<R, RunFailed>

/** A finished execution: what produced it answered, its conversation (null without one) and its id. */
export interface ExecutionAnswer<R extends ExecutionResult> {
  readonly result: R
  readonly conversationId: string | null
  readonly executionId: string
}

export { abandonedByServer, cancelledByClient } from "./reasons.js"

/** The reason recorded on an execution stopped by `POST /executions/{id}/cancel`. */
export const cancelledByRequest = "Cancelled by request before the reply was complete."

const notFound = (what: string, id: string) => new NotFound({ message: `No ${what} '${id}' in this organization.` })
const noCredits = () =>
  new InsufficientCredits({ message: "This organization has no credits left; a run costs one credit. Nothing ran and nothing was charged." })
const noSubscriptionCredits = () =>
  new InsufficientCredits({ message: "No credits are left on your plans; a run costs one credit. Nothing ran and nothing was charged." })
/** The refusal of a run whose credit source is empty. */
export const noCreditsFor = (source: CreditSource) => (source.kind === "organization" ? noCredits() : noSubscriptionCredits())
/** The charge an abandoned execution holds, from its record. */
const chargeOf = (row: { organization_id: string; credit_subscription_id: string | null; credit_pool: "bonus" | "allowance" | null }): CreditCharge =>
  row.credit_subscription_id === null || row.credit_pool === null
    ? { kind: "organization", organizationId: row.organization_id }
    : { kind: "subscription", subscriptionId: row.credit_subscription_id, pool: row.credit_pool }
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
    const agentFlowTools = yield* AgentFlowTools
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const inTransaction = transactionsOn(sql)
    const writes = yield* WriteTransactions
    const { locks, running } = yield* SharedTurns
    const credits = yield* CreditRepo
    const instance = yield* InstanceRegistry
    const traces = yield* TraceRepo
    const traceExport = yield* TraceExport
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
        // A streamed turn is refused before its stream starts; a turn answered whole is refused as
        // surely, with nothing run or written, by the credit its execution takes first.
        if ((yield* FiberRef.get(ReplyDelivery)) === "streamed" && (yield* repo.creditsLeft(org)) <= 0) return yield* noCredits()
        return { actor, agentId, version, draft: options.draft, definition, message: body.message, conversationId }
      })

    /**
     * Writes the execution `running` and, in a conversation, the user's message, reserving the
     * credit, and for a run whose events are stored its `start` (id 1); answers the history before it.
     */
    const begin = (run: RunTarget, conversationId: string | null, executionId: string, start: RunEvent | null) =>
      Effect.flatMap(
        Effect.flatMap(instance.claimant, (claimedBy) => writes.run(function* () {
          const org = run.actor.organization.id
          const charge = yield* takeCreditTx(org, run.credit ?? organizationCredits)
          if (charge === null) return null
          const atMs = clock.now()
          const at = isoAt(atMs)
          const isNew = run.conversation !== null && run.conversation.id === null && conversationId !== null
          if (isNew) {
            yield* insertConversationTx({
              id: conversationId,
              organization_id: org,
              target_kind: run.conversation.targetKind,
              target_id: run.targetId,
              created_at: at,
              updated_at: at,
              started_by_key_id: run.actor.key.id,
              started_by_member_id: run.actor.member?.id ?? null
            })
          }
          const history = conversationId === null || isNew ? [] : yield* historyTx(conversationId)
          yield* insertExecutionTx({
            id: executionId,
            organizationId: org,
            kind: run.kind,
            targetId: run.targetId,
            version: run.version,
            draft: run.draft,
            conversationId,
            creditsCharged: 1,
            startedAt: at,
            claimedBy
          })
          yield* recordChargeTx(executionId, charge)
          if (start !== null) {
            const { type, ...data } = start
            yield* insertRunEventsTx(executionId, [{ seq: 1, event: type, data: JSON.stringify(data) }], atMs)
          }
          if (conversationId !== null) {
            yield* appendMessageTx({ id: newId(), conversationId, role: "user", text: run.message, executionId, at })
            if (!isNew) yield* touchConversationTx(conversationId, at)
          }
          return { charge, history: history.map((row): ChatTurn => ({ role: row.role, text: row.text })) }
        })),
        (begun) => (begun === null ? Effect.fail(noCreditsFor(run.credit ?? organizationCredits)) : Effect.succeed(begun))
      )

    /** Finishes the execution; in a conversation a reply (whole or partial) is stored as the assistant's message; a run not succeeded gives its credit back. */
    const finish = (
      run: RunTarget,
      charge: CreditCharge,
      conversationId: string | null,
      executionId: string,
      outcome: {
        readonly status: "succeeded" | "failed" | "cancelled"
        readonly reply: string
        readonly steps: ReadonlyArray<ExecutionStepRecord>
        readonly toolsCalled: ReadonlyArray<ToolCall>
        readonly error: string | null
        readonly trace: ExecutionTrace
        /** When it started (epoch milliseconds), for the exported trace. */
        readonly startedMs: number
      }
    ) =>
      Effect.zipLeft(
        Effect.suspend(() => {
          // Serialized before the transaction, which then holds the writer for its statements alone.
          const steps = JSON.stringify(outcome.steps)
          const toolsCalled = JSON.stringify(outcome.toolsCalled)
          const trace = JSON.stringify(outcome.trace)
          return writes.run(function* () {
            const at = now()
            const succeeded = outcome.status === "succeeded"
            const finished = yield* finishExecutionTx(executionId, {
              status: outcome.status,
              steps,
              toolsCalled,
              creditsCharged: succeeded ? 1 : 0,
              finishedAt: at,
              error: outcome.error,
              trace
            })
            // Taken over meanwhile by another instance's recovery (this one was judged gone): it was
            // finished there and its credit given back; nothing more is recorded here.
            if (!finished) return
            if (!succeeded) yield* giveBackCreditTx(charge)
            if (conversationId !== null && (succeeded || (outcome.status === "cancelled" && outcome.reply !== ""))) {
              yield* appendMessageTx({ id: newId(), conversationId, role: "assistant", text: outcome.reply, executionId, at })
              yield* touchConversationTx(conversationId, at)
            }
          })
        }),
        traceExport.export(
          { id: executionId, organizationId: run.actor.organization.id, kind: run.kind, targetId: run.targetId, status: outcome.status, error: outcome.error, startedMs: outcome.startedMs, finishedMs: Date.now() },
          outcome.trace.spans
        )
      )

    /**
     * Runs one execution: reserves its credit and records it (in a conversation, holding the
     * conversation's lock from reading the history to storing the reply), lets `produce` answer
     * outside any transaction, then finishes it. Interrupting it (a client that went away) stops
     * `produce` and records the execution `cancelled` with what was produced.
     */
    const runExecution = <R extends ExecutionResult>(
      run: RunTarget,
      produce: TurnProducer<R>,
      onEvent: RunSink = () => Effect.void
    ): Effect.Effect<ExecutionAnswer<R>, RunFailed | RunCancelled | InsufficientCredits> => {
      const conversationId = run.conversation === null ? null : (run.conversation.id ?? newId())
      const executionId = newId()
      const body = Effect.uninterruptibleMask((restore) =>
        running.register(executionId, (stoppable) => Effect.gen(function* () {
          const startedMs = Date.now()
          const started: RunEvent =
            conversationId === null ? { type: "start", executionId } : { type: "start", executionId, conversation_id: conversationId }
          const { charge, history } = yield* begin(run, conversationId, executionId, storesEvents(onEvent) ? started : null)
          let partial = ""
          const record: ExecutionRecord = { steps: [], toolsCalled: [] }
          const trace = makeTraceRecorder()
          const { steps, toolsCalled } = record
          const sink: TurnSink = (event) => {
            if (event.type === "step") return Effect.sync(() => void steps.push(event.step))
            if (event.type === "tool") {
              toolsCalled.push({ name: event.name, arguments: event.arguments })
              return onEvent({ type: "tool", name: event.name })
            }
            partial += event.text
            return onEvent({ type: "delta", text: event.text })
          }
          const exit = yield* Effect.exit(
            restore(stoppable(Effect.zipRight(onEvent(started), withTrace(trace, produce(history, sink, record))), () => new RunCancelled({ message: cancelledByRequest })))
          )
          if (Exit.isSuccess(exit)) {
            const result = exit.value
            yield* finish(run, charge, conversationId, executionId, {
              status: "succeeded",
              reply: result.reply,
              steps: result.steps,
              toolsCalled: result.toolsCalled,
              error: null,
              trace: trace.finish(),
              startedMs
            })
            return { result, conversationId, executionId }
          }
          const failure = Cause.failureOption(exit.cause)
          // Interrupted from outside: a client that went away, or for a run that outlives its connection the server closing (`RunInterruption`).
          const interrupted = Option.isNone(failure) && Cause.isInterruptedOnly(exit.cause) ? yield* FiberRef.get(RunInterruption) : null
          const status = interrupted !== null ? interrupted.status : Option.isSome(failure) && failure.value instanceof RunCancelled ? "cancelled" : "failed"
          const error = Option.isSome(failure) ? failure.value.message : interrupted !== null ? interrupted.error : "The run failed on the server."
          yield* finish(run, charge, conversationId, executionId, { status, reply: partial, steps, toolsCalled, error, trace: trace.finish(), startedMs })
          return yield* Effect.failCause(exit.cause)
        }))
      )
      return conversationId === null ? body : locks.withLock(conversationId, body)
    }

    /** One Agent turn on `definition`: its Knowledgebases as the search tool and its published Flows as tools, reporting to `sink`. */
    const agentReply = (
      actor: Principal,
      definition: AgentDefinition,
      history: ReadonlyArray<ChatTurn>,
      message: string,
      sink: TurnSink
    ): Effect.Effect<TurnResult, RunFailed> =>
      Effect.flatMap(agentFlowTools.toolsFor(actor, definition.flowIds), (flowTools) => {
        const { knowledgebaseIds } = definition
        const tools = [...(knowledgebaseIds.length === 0 ? [] : [knowledgeTool(search, actor, knowledgebaseIds)]), ...flowTools]
        return runtime.runTurn({ model: definition.model ?? "", instructions: definition.instructions, history, message, tools }, sink)
      })

    /**
     * Runs a prepared Agent turn, holding its conversation's lock from reading the history to
     * storing the reply. Interrupting it (a client that went away) stops the model call and records
     * the execution `cancelled` with what was produced.
     */
    const runAgentTurn = (
      turn: PreparedTurn,
      onEvent: RunSink = () => Effect.void
    ): Effect.Effect<ConversationReply, RunFailed | RunCancelled | InsufficientCredits> =>
      Effect.map(
        runExecution(
          {
            actor: turn.actor,
            kind: "agent",
            targetId: turn.agentId,
            version: turn.version,
            draft: turn.draft,
            message: turn.message,
            conversation: { targetKind: "agent", id: turn.conversationId }
          },
          (history, sink) => agentReply(turn.actor, turn.definition, history, turn.message, sink),
          onEvent
        ),
        (answer) => ({ reply: answer.result.reply, conversation_id: answer.conversationId!, executionId: answer.executionId })
      )

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
      runExecution,
      agentReply,

      /**
       * Finishes as `failed` the executions left `running` by instances that stopped or are gone
       * (which ones: `RecoveryMoment`), giving their reserved credits back; answers how many this
       * call took over. Each is taken by one conditional update, so two instances recovering at
       * once give a credit back once.
       */
      recoverAbandoned: (moment: RecoveryMoment): Effect.Effect<number> =>
        Effect.gen(function* () {
          const claim = instance.recoverable(moment)
          // A read first, outside any transaction: the periodic sweep usually finds nothing.
          if ((yield* repo.running(claim)).length === 0) return 0
          return yield* inTransaction(
            Effect.gen(function* () {
              const at = now()
              let taken = 0
              for (const execution of yield* repo.running(claim)) {
                if (!(yield* repo.abandon(execution.id, at, abandonedByServer))) continue
                if (execution.credits_charged > 0) yield* credits.giveBack(chargeOf(execution))
                taken++
              }
              return taken
            })
          )
        }),

      /** An execution of the caller's organization; `summary` leaves out tool arguments, `full` adds its trace. */
      execution: (actor: Principal, id: string, summary: boolean, full = false): Effect.Effect<Execution, NotFound> =>
        Effect.flatMap(repo.execution(actor.organization.id, id), (row) =>
          !row
            ? Effect.fail(notFound("execution", id))
            : full
              ? Effect.map(traces.trace(row.id), (trace): Execution => ({ ...toExecution(row), trace }))
              : Effect.succeed(toExecution(row, summary))
        ),

      /**
       * Cancels a running execution of the caller's organization: its turn stops and is recorded
       * `cancelled` (nothing charged) before this answers; a finished execution is answered unchanged.
       */
      cancelExecution: (actor: Principal, id: string): Effect.Effect<Execution, NotFound> =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const row = yield* repo.execution(org, id)
          if (!row) return yield* notFound("execution", id)
          if (row.status === "running") yield* running.cancel(id)
          const current = yield* repo.execution(org, id)
          return toExecution(current ?? row)
        }),

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
  dependencies: [RunRepo.Default, CreditRepo.Default, AgentRepo.Default, Cursors.Default, SearchService.Default, ModelRuntime.Default, AgentFlowTools.Default, WriteTransactions.Default, SharedTurns.Default, TraceRepo.Default]
}) {}
