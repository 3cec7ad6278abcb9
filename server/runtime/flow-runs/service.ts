/**
 * Runs of Flows: the published version (or the draft) on validated inputs, or, for a Flow without
 * questions, on a message continuing a conversation like an Agent. One execution and one credit
 * per run, exactly as Agent runs: the checks write nothing; one short transaction reserves the
 * credit and writes the execution `running` (and the user's message); the steps run outside any
 * transaction; a second short transaction records the outcome, giving the credit back unless the
 * run succeeded. Also the Flows an Agent offers its model as typed tools (`flowTools`).
 */
import { Cause, Effect, Either, Exit, Option } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InsufficientCredits, InvalidRequest, NotFound, type RunCancelled, RunFailed } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { SearchService } from "../../knowledge/search/service.js"
import { AgentRepo } from "../../builder/agents/repo.js"
import { type CheckedFlow, checkFlowDefinition, conversationMessageVariable } from "../../builder/flows/definition.js"
import { validateFlowInputs } from "../../builder/flows/inputs.js"
import { FlowRepo } from "../../builder/flows/repo.js"
import { storedFlowDefinition } from "../../builder/flows/stored.js"
import type { TemplateValue } from "../../builder/flows/templates.js"
import type { ModelTool, ToolCall } from "../model.js"
import { ModelRuntime } from "../service.js"
import { maxMessageChars } from "../runs/domain.js"
import { RunRepo } from "../runs/repo.js"
import { AgentFlowTools } from "../runs/agent-tools.js"
import type { RunSink } from "../runs/events.js"
import { RunService } from "../runs/service.js"
import type { FlowRunAnswer, FlowRunRequest } from "./domain.js"
import { runInputs } from "./inputs.js"
import { executeFlow, type FlowRecorder, type FlowStepRecord, type StepServices } from "./steps.js"
import { flowToolParameters, flowToolNames } from "./tools.js"

/** A Flow run that passed its checks and may run. */
export interface PreparedFlowRun {
  readonly actor: Principal
  readonly flowId: string
  /** The published version; null for a draft run. */
  readonly version: number | null
  readonly draft: boolean
  readonly flow: CheckedFlow
  /** The validated inputs, or `{message}` for a Flow without questions. */
  readonly inputs: Readonly<Record<string, TemplateValue>>
  /** The conversation continued (a Flow without questions); null starts a new one or has none. */
  readonly conversationId: string | null
}

const notFound = (what: string, id: string) => new NotFound({ message: `No ${what} '${id}' in this organization.` })
const noCredits = () =>
  new InsufficientCredits({ message: "This organization has no credits left; a run costs one credit. Nothing ran and nothing was charged." })

/** A stored definition read back as checked; a stored definition always passed the check. */
export const checkedStored = (name: string, description: string, text: string): Effect.Effect<CheckedFlow> =>
  Either.match(checkFlowDefinition(storedFlowDefinition(name, description, text)), {
    onLeft: ({ problems }) => Effect.dieMessage(`A stored Flow definition no longer passes its check: ${problems.join("; ")}`),
    onRight: Effect.succeed
  })

/** Flow runs and the Flow tools of Agent turns. */
export class FlowRunService extends Effect.Service<FlowRunService>()("svc/FlowRunService", {
  effect: Effect.gen(function* () {
    const repo = yield* RunRepo
    const runs = yield* RunService
    const flows = yield* FlowRepo
    const agents = yield* AgentRepo
    const search = yield* SearchService
    const runtime = yield* ModelRuntime
    const clock = yield* AppClock
    const now = () => isoAt(clock.now())
    const services: StepServices = { search, agents, runtime }

    /** The checks of a run, in order: the Flow, the body (every problem named), the conversation, a credit left. Nothing is written. */
    const prepareFlowRun = (
      actor: Principal,
      flowId: string,
      body: FlowRunRequest,
      options: { readonly draft: boolean }
    ): Effect.Effect<PreparedFlowRun, NotFound | InvalidRequest | InsufficientCredits> =>
      Effect.gen(function* () {
        const org = actor.organization.id
        let version: number | null = null
        let flow: CheckedFlow
        if (options.draft) {
          const item = yield* flows.item(org, flowId)
          if (!item) return yield* notFound("Flow", flowId)
          flow = yield* checkedStored(item.name, item.description, item.draft)
        } else {
          const published = yield* flows.published(org, flowId)
          if (!published) return yield* notFound("published Flow", flowId)
          flow = yield* checkedStored(published.name, published.description, published.definition)
          version = published.version
        }
        const inputs = runInputs(flow, body)
        if (Either.isLeft(inputs)) return yield* new InvalidRequest({ message: `${inputs.left.join("; ")}.` })
        const conversationId = flow.conversational ? (body.conversation_id ?? null) : null
        if (conversationId !== null) {
          const conversation = yield* repo.conversation(org, conversationId)
          if (!conversation || conversation.target_kind !== "flow" || conversation.target_id !== flowId) {
            return yield* notFound("conversation of this Flow", conversationId)
          }
        }
        if ((yield* repo.creditsLeft(org)) <= 0) return yield* noCredits()
        return { actor, flowId, version, draft: options.draft, flow, inputs: inputs.right, conversationId }
      })

    /**
     * Runs a prepared Flow as one execution of the shared runner (credit reserved at start, the
     * conversation's lock, cancellable, nothing charged unless it succeeds): `start` once the
     * execution exists, a `tool` event (`{name}`: the step) as each step starts, the output as one
     * `delta`, then the answer. A conversational Flow stores the output as the assistant's message;
     * a run cut short stores none (the client was never sent an output).
     */
    const runFlow = (run: PreparedFlowRun, onEvent: RunSink = () => Effect.void): Effect.Effect<FlowRunAnswer, RunFailed | RunCancelled | InsufficientCredits> => {
      const conversational = run.flow.conversational
      return Effect.map(
        runs.runExecution(
          {
            actor: run.actor,
            kind: "flow",
            targetId: run.flowId,
            version: run.version,
            draft: run.draft,
            message: conversational ? String(run.inputs[conversationMessageVariable]) : "",
            conversation: conversational ? { targetKind: "flow", id: run.conversationId } : null
          },
          (_history, _sink, record) =>
            Effect.gen(function* () {
              const recorder: FlowRecorder = { steps: record.steps, toolsCalled: record.toolsCalled, onStep: (name) => onEvent({ type: "tool", name }) }
              const outcome = yield* executeFlow(services, run.actor, run.flow, run.inputs, recorder)
              yield* onEvent({ type: "delta", text: outcome.output })
              return { reply: outcome.output, steps: record.steps, toolsCalled: record.toolsCalled, variables: outcome.variables }
            }),
          onEvent
        ),
        ({ result, conversationId, executionId }): FlowRunAnswer =>
          conversationId === null
            ? { executionId, output: result.reply, variables: result.variables }
            : { reply: result.reply, conversation_id: conversationId, executionId }
      )
    }

    /**
     * Runs `flow` (named `name`) inside another execution on a model's or a router's arguments:
     * its inputs (or `{message}` for a Flow without questions) validated, else `run_failed` naming
     * every problem; its steps recorded in `recorder`; no credit of its own. Answers its output.
     */
    const runMember = (
      actor: Principal,
      name: string,
      flow: CheckedFlow,
      args: unknown,
      recorder: Pick<FlowRecorder, "steps" | "toolsCalled">
    ): Effect.Effect<string, RunFailed> =>
      Effect.gen(function* () {
        const message = (args as { message?: unknown } | null)?.message
        const inputs = runInputs(flow, flow.conversational ? { message: String(message ?? "") } : { inputs: args })
        if (Either.isLeft(inputs)) return yield* new RunFailed({ message: `The Flow "${name}" refused its inputs: ${inputs.left.join("; ")}.` })
        const outcome = yield* executeFlow(services, actor, flow, inputs.right, { ...recorder, onStep: () => Effect.void })
        return outcome.output
      })

    /**
     * The published Flows of `flowIds` as tools of an Agent's turn, in order (a Flow deleted or
     * unpublished since is left out): named `flow_<name>` (sanitised, unique), with the Flow's
     * inputs schema (a Flow without questions takes `{message}`); running one runs the Flow's steps
     * inside the Agent's execution (no credit of its own) and answers its output.
     */
    const flowTools = (actor: Principal, flowIds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<ModelTool>> =>
      Effect.gen(function* () {
        const found: Array<{ readonly description: string; readonly name: string; readonly flow: CheckedFlow }> = []
        for (const id of flowIds) {
          const published = yield* flows.published(actor.organization.id, id)
          if (!published) continue
          const flow = yield* checkedStored(published.name, published.description, published.definition)
          found.push({ name: published.name, description: published.description, flow })
        }
        const names = flowToolNames(found.map((entry) => entry.name))
        return found.map(({ name, description, flow }, i): ModelTool => ({
          name: names[i]!,
          description: description === "" ? `Runs the Flow "${name}" and answers its output.` : description,
          parameters: flowToolParameters(flow),
          run: (args) => runMember(actor, name, flow, args, { steps: [] as Array<FlowStepRecord>, toolsCalled: [] as Array<ToolCall> })
        }))
      })

    yield* (yield* AgentFlowTools).register(flowTools)
    return { prepareFlowRun, runFlow, flowTools, runMember } as const
  }),
  dependencies: [RunRepo.Default, RunService.Default, FlowRepo.Default, AgentRepo.Default, SearchService.Default, ModelRuntime.Default, AgentFlowTools.Default]
}) {}

/** The published Flows of `flowIds` as typed tools of an Agent's turn for `actor` (see `FlowRunService.flowTools`). */
export const flowTools = (actor: Principal, flowIds: ReadonlyArray<string>) => Effect.flatMap(FlowRunService, (service) => service.flowTools(actor, flowIds))
