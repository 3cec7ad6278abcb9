/**
 * Runs of Apps: a conversation turn (published, or the draft with its members' published
 * versions) and a transaction. The Supervisor (`supervisor.ts`) routes each message to one member,
 * an Agent or a Flow at its pinned version; the execution, its credit, the conversation and its
 * lock, and streaming are `RunService`'s, exactly as for Agent runs. Knows nothing of HTTP.
 */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { InsufficientCredits, InvalidRequest, NotFound, type RunCancelled, type RunFailed } from "../../platform/errors.js"
import { AppRepo, type AppContractColumns } from "../../builder/apps/repo.js"
import { parseAppDefinition, type AppVersionDefinition } from "../../builder/apps/definition.js"
import { reportedProblems } from "../../builder/flows/problems.js"
import { ModelRuntime } from "../service.js"
import type { ConversationTurn } from "../runs/domain.js"
import { RunRepo } from "../runs/repo.js"
import { CreditRepo, type CreditSource, organizationCredits } from "../runs/credit-repo.js"
import type { RunSink } from "../runs/events.js"
import { type ExecutionResult, noCreditsFor, RunService } from "../runs/service.js"
import { checkedStored, FlowRunService } from "../flow-runs/service.js"
import type { MemberKind, MemberVersionRow } from "./repo.js"
import type { AppConversationReply, TransactionReply, TransactionRequest } from "./domain.js"
import { agentMembersOf, flowMembersOf, type Member } from "./members.js"
import { AppRunRepo } from "./repo.js"
import { schemaProblems } from "./schema-check.js"
import { noMembers, supervise, type SupervisorDeps } from "./supervisor.js"
import { checkedOutput, transactionInstructions } from "./transaction-output.js"

/** An App conversation turn that passed its checks and may run. */
export interface PreparedAppTurn {
  readonly actor: Principal
  readonly appId: string
  /** The published version; null for a draft run. */
  readonly version: number | null
  readonly draft: boolean
  readonly app: { readonly name: string; readonly description: string; readonly greeting: string | null }
  readonly members: ReadonlyArray<Member>
  readonly message: string
  /** The conversation continued; null starts a new one. */
  readonly conversationId: string | null
  /** Whose credits the turn spends. */
  readonly credit: CreditSource
}

const notFound = (what: string, id: string) => new NotFound({ message: `No ${what} '${id}' in this organization.` })

/** App conversation turns, draft runs and transactions. */
export class AppRunService extends Effect.Service<AppRunService>()("svc/AppRunService", {
  effect: Effect.gen(function* () {
    const runs = yield* RunService
    const runRepo = yield* RunRepo
    const apps = yield* AppRepo
    const repo = yield* AppRunRepo
    const runtime = yield* ModelRuntime
    const flowRuns = yield* FlowRunService
    const credits = yield* CreditRepo

    const supervisorDeps = (): SupervisorDeps => ({
      provider: runtime.resolve().provider,
      runTurn: runtime.runTurn,
      agentReply: runs.agentReply,
      flowReply: flowRuns.runMember
    })

    /** The members from their Agent and Flow version rows: Agents first, then Flows, each in the App's order. */
    const membersFrom = (rows: Record<MemberKind, ReadonlyArray<MemberVersionRow>>) =>
      Effect.map(
        Effect.forEach(rows.flow, (row) => Effect.map(checkedStored(row.name, row.description, row.definition), (flow) => ({ row, flow }))),
        (flows): ReadonlyArray<Member> => [...agentMembersOf(rows.agent), ...flowMembersOf(flows)]
      )

    /** The published App with its pinned member Agents, or `not_found`. */
    const publishedApp = (actor: Principal, appId: string) =>
      Effect.gen(function* () {
        const org = actor.organization.id
        const row = yield* apps.published<AppContractColumns>(org, appId)
        if (!row) return yield* notFound("published App", appId)
        const pinned = JSON.parse(row.definition) as Partial<AppVersionDefinition>
        const members = yield* membersFrom({
          agent: yield* repo.membersAt("agent", org, pinned.agents ?? []),
          flow: yield* repo.membersAt("flow", org, pinned.flows ?? [])
        })
        return { row, greeting: pinned.greeting ?? null, members }
      })

    const requireCredit = (actor: Principal, source: CreditSource = organizationCredits) =>
      Effect.flatMap(credits.left(actor.organization.id, source), (left) => (left <= 0 ? Effect.fail(noCreditsFor(source)) : Effect.void))

    return {
      /**
       * The checks of a turn (the App, published or its draft; the conversation: this App's, else
       * `not_found`; a member Agent to answer, else `run_failed`; a credit left in `options.credit`,
       * the organization's by default); nothing is written.
       */
      prepareTurn: (
        actor: Principal,
        appId: string,
        body: ConversationTurn,
        options: { readonly draft: boolean; readonly credit?: CreditSource }
      ): Effect.Effect<PreparedAppTurn, NotFound | InsufficientCredits | RunFailed> =>
        Effect.gen(function* () {
          const org = actor.organization.id
          let prepared: Omit<PreparedAppTurn, "actor" | "appId" | "message" | "conversationId" | "credit">
          if (options.draft) {
            const item = yield* apps.item(org, appId)
            if (!item) return yield* notFound("App", appId)
            const definition = parseAppDefinition(item.draft)
            const members = yield* membersFrom({
              agent: yield* repo.publishedMembers("agent", org, definition.agentIds),
              flow: yield* repo.publishedMembers("flow", org, definition.flowIds)
            })
            prepared = { version: null, draft: true, app: { name: item.name, description: item.description, greeting: definition.greeting }, members }
          } else {
            const { row, greeting, members } = yield* publishedApp(actor, appId)
            prepared = { version: row.version, draft: false, app: { name: row.name, description: row.description, greeting }, members }
          }
          const conversationId = body.conversation_id ?? null
          if (conversationId !== null) {
            const conversation = yield* runRepo.conversation(org, conversationId)
            if (!conversation || conversation.target_kind !== "app" || conversation.target_id !== appId) {
              return yield* notFound("conversation of this App", conversationId)
            }
          }
          if (prepared.members.length === 0) return yield* noMembers()
          const credit = options.credit ?? organizationCredits
          yield* requireCredit(actor, credit)
          return { ...prepared, actor, appId, message: body.message, conversationId, credit }
        }),

      /**
       * Runs a prepared turn as one execution of kind `app` in a conversation of target kind `app`;
       * `greeting` is the App's greeting on a conversation's first turn, null afterwards.
       */
      runTurn: (turn: PreparedAppTurn, onEvent?: RunSink): Effect.Effect<AppConversationReply, RunFailed | RunCancelled | InsufficientCredits> =>
        Effect.map(
          runs.runExecution(
            {
              actor: turn.actor,
              kind: "app",
              targetId: turn.appId,
              version: turn.version,
              draft: turn.draft,
              message: turn.message,
              conversation: { targetKind: "app", id: turn.conversationId },
              credit: turn.credit
            },
            (history, sink) =>
              supervise(supervisorDeps(), { actor: turn.actor, app: turn.app, members: turn.members, history, message: turn.message }, sink),
            onEvent
          ),
          (answer) => ({
            reply: answer.result.reply,
            conversation_id: answer.conversationId!,
            greeting: turn.conversationId === null ? turn.app.greeting : null,
            executionId: answer.executionId
          })
        ),

      /**
       * A transaction on the published App: the Transaction Service must be on (else 400), `input`
       * valid under the input schema (else 400 naming every problem), a member and a credit left;
       * then `JSON.stringify(input)` goes to the Supervisor, its reply is made an object and
       * validated against the output schema, else the execution (kind `transaction`) fails with
       * `run_failed` and nothing is charged.
       */
      transaction: (
        actor: Principal,
        appId: string,
        body: TransactionRequest
      ): Effect.Effect<TransactionReply, NotFound | InvalidRequest | InsufficientCredits | RunFailed | RunCancelled> =>
        Effect.gen(function* () {
          const { row, members } = yield* publishedApp(actor, appId)
          if (row.transaction_enabled !== 1 || row.input_schema === null || row.output_schema === null) {
            return yield* new InvalidRequest({
              message: `The App '${appId}' has no Transaction Service in its published version: set api.transactionEnabled with PATCH /apps/{id}/draft, then publish.`
            })
          }
          const inputSchema = JSON.parse(row.input_schema) as Record<string, unknown>
          const outputSchema = JSON.parse(row.output_schema) as Record<string, unknown>
          const problems = schemaProblems("input", inputSchema, body.input)
          if (problems.length > 0) return yield* new InvalidRequest({ message: `${reportedProblems(problems).join("; ")}.` })
          if (members.length === 0) return yield* noMembers()
          yield* requireCredit(actor)
          const deps = supervisorDeps()
          const message = JSON.stringify(body.input)
          const answer = yield* runs.runExecution(
            { actor, kind: "transaction", targetId: appId, version: row.version, draft: false, message, conversation: null },
            (history, sink) =>
              Effect.gen(function* () {
                const result = yield* supervise(
                  deps,
                  {
                    actor,
                    app: { name: row.name, description: row.description },
                    members,
                    history,
                    message,
                    extraInstructions: transactionInstructions(outputSchema)
                  },
                  sink
                )
                const output = yield* checkedOutput(deps.provider, outputSchema, result.reply)
                return { ...result, output } satisfies ExecutionResult & { output: Record<string, unknown> }
              })
          )
          return { executionId: answer.executionId, output: answer.result.output }
        })
    }
  }),
  dependencies: [RunService.Default, RunRepo.Default, CreditRepo.Default, AppRepo.Default, AppRunRepo.Default, ModelRuntime.Default, FlowRunService.Default]
}) {}
