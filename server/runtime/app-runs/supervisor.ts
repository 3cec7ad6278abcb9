/**
 * The App Supervisor: routes a message to one member, an Agent (one Agent turn) or a Flow (its
 * steps, on inputs), at the version that runs. On the `builtin` model it routes by description
 * (`routeByDescription`) among the members that can take the message (every Agent; a Flow without
 * questions; a Flow with questions only when the message is a JSON object its inputs accept); a
 * message sharing no word with any of them goes to the first. The member's reply is the App's
 * reply, streamed as it comes. On an OpenAI-compatible model the members are offered as tools
 * (`ask_<name>` taking `{message}`, `flow_<name>` taking the Flow's inputs) and the model routes
 * and answers from what they said; the members' own text is not streamed, their tool calls and
 * steps are recorded. In an execution's trace, the member's tool span starts with a `route` span
 * holding the decision (the member, and how it was chosen: by the words of its description, as
 * the first that can take the message, or by the model calling its tool); the member's own run
 * follows as the tool span's children.
 */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import type { AgentDefinition } from "../../builder/agents/domain.js"
import type { CheckedFlow } from "../../builder/flows/definition.js"
import { RunFailed } from "../../platform/errors.js"
import { type ChatTurn, type ModelTool, timedStep, type ToolCall, type TurnResult, type TurnSink } from "../model.js"
import { routeByDescription } from "../route.js"
import { traced, tracedText, type TracedRoute } from "../trace.js"
import { flowToolParameters } from "../flow-runs/tools.js"
import type { ExecutionResult, ExecutionStepRecord } from "../runs/service.js"
import { builtinFlowArguments, type Member } from "./members.js"

/** Where a Flow member records its steps and tools: the App's execution. */
export interface MemberRecorder {
  readonly steps: { readonly push: (step: ExecutionStepRecord) => unknown }
  readonly toolsCalled: Array<ToolCall>
}

/**
 * What the Supervisor needs: the model runtime, one Agent turn (`RunService.agentReply`) and one
 * Flow run inside another execution (`FlowRunService.runMember`).
 */
export interface SupervisorDeps {
  readonly provider: "builtin" | "openai"
  readonly runTurn: (request: { model: string; instructions: string; history: ReadonlyArray<ChatTurn>; message: string; tools: ReadonlyArray<ModelTool> }, sink: TurnSink) => Effect.Effect<TurnResult, RunFailed>
  readonly agentReply: (actor: Principal, definition: AgentDefinition, history: ReadonlyArray<ChatTurn>, message: string, sink: TurnSink) => Effect.Effect<TurnResult, RunFailed>
  readonly flowReply: (actor: Principal, name: string, flow: CheckedFlow, args: unknown, recorder: MemberRecorder) => Effect.Effect<string, RunFailed>
}
/** One message for the Supervisor. */
export interface SupervisedMessage {
  readonly actor: Principal
  readonly app: { readonly name: string; readonly description: string }
  readonly members: ReadonlyArray<Member>
  readonly history: ReadonlyArray<ChatTurn>
  readonly message: string
  /** Added to the Supervisor's instructions (a transaction's output contract). */
  readonly extraInstructions?: string
}

const askParameters = {
  type: "object",
  properties: { message: { type: "string", description: "What to ask this member: the user's message, or the part of it this member should answer." } },
  required: ["message"],
  additionalProperties: false
} as const

/** The Supervisor's instructions on a language model. */
export const supervisorInstructions = (app: SupervisedMessage["app"], extra?: string): string =>
  [
    `You are the Supervisor of the App "${app.name}".${app.description === "" ? "" : ` ${app.description}`}`,
    "Route each user message to the one member best suited to it by calling that member's tool, then answer the user from what the member replied.",
    "If no member fits, say so plainly.",
    ...(extra === undefined ? [] : [extra])
  ].join("\n")

/**
 * The member `builtin` routes `message` to, the words that matched (none when it fell back to the
 * first member that can take it) and the member's arguments; null when no member can take it.
 */
export const builtinRoute = (
  message: string,
  members: ReadonlyArray<Member>
): { member: Member; matched: ReadonlyArray<string>; flowArguments: unknown } | null => {
  const able = members.flatMap((member) => {
    const flowArguments: unknown = member.kind === "agent" ? null : builtinFlowArguments(member.flow, message)
    return member.kind === "flow" && flowArguments === null
      ? []
      : [{ id: member.id, name: member.name, description: member.description, member, flowArguments }]
  })
  if (able.length === 0) return null
  const choice = routeByDescription(message, able)
  const { member, flowArguments } = choice === null ? able[0]! : choice.member
  return { member, matched: choice === null ? [] : choice.matched, flowArguments }
}

/** The `route` span of the decision to ask `member` (an instant: the decision is already made). */
const routeDecision = (member: Member, by: TracedRoute["by"], matched: ReadonlyArray<string>) =>
  traced(
    "route",
    member.name,
    () => ({ route: { member: { kind: member.kind, id: member.id, name: member.name, version: member.version }, by, matched } }),
    Effect.void
  )

/** Refuses a message no member can take on the `builtin` model (only Flows whose questions free text cannot answer). */
const noMemberTakes = () =>
  new RunFailed({
    message:
      "No member of this App can take this message on the builtin model: its Flows ask questions, which need a JSON object of their inputs (or a language model to fill them). Nothing was charged."
  })

/** A sink that records a member's steps and tool calls, forwarding them (and, when `forwardText`, its text) to `sink`. */
const memberSink = (sink: TurnSink, steps: Array<ExecutionStepRecord>, calls: Array<ToolCall>, forwardText: boolean): TurnSink => (event) => {
  if (event.type === "step") steps.push(event.step)
  if (event.type === "tool") calls.push({ name: event.name, arguments: event.arguments })
  return event.type === "delta" && !forwardText ? Effect.void : sink(event)
}

/** Answers one message through a member, reporting to `sink`; `members` is never empty. */
export const supervise = (deps: SupervisorDeps, input: SupervisedMessage, sink: TurnSink): Effect.Effect<ExecutionResult, RunFailed> =>
  Effect.gen(function* () {
    const steps: Array<ExecutionStepRecord> = []
    const calls: Array<ToolCall> = []
    const recorder: MemberRecorder = { steps, toolsCalled: calls }
    if (deps.provider === "builtin") {
      const route = builtinRoute(input.message, input.members)
      if (route === null) return yield* noMemberTakes()
      const { member, matched } = route
      const args = { message: input.message, member: member.id, version: member.version, matched }
      calls.push({ name: member.tool, arguments: args })
      yield* sink({ type: "tool", name: member.tool, arguments: args })
      const memberRun =
        member.kind === "agent"
          ? Effect.map(
              deps.agentReply(input.actor, member.definition, input.history, input.message, memberSink(sink, steps, calls, true)),
              (answer) => answer.reply
            )
          : Effect.tap(deps.flowReply(input.actor, member.name, member.flow, route.flowArguments, recorder), (output) =>
              sink({ type: "delta", text: output })
            )
      const reply = yield* timedStep(
        "tool",
        member.tool,
        steps,
        sink,
        traced(
          "tool",
          member.tool,
          () => ({ arguments: args }),
          Effect.zipRight(routeDecision(member, matched.length === 0 ? "first" : "description", matched), memberRun),
          (output) => ({ result: tracedText(output) })
        )
      )
      return { reply, toolsCalled: calls, steps }
    }
    const tools: Array<ModelTool> = input.members.map((member) =>
      member.kind === "agent"
        ? {
            name: member.tool,
            description: `Ask ${member.name}${member.description === "" ? "" : `: ${member.description}`}`,
            parameters: askParameters,
            run: (args) =>
              Effect.zipRight(routeDecision(member, "model", []), Effect.map(
                deps.agentReply(
                  input.actor,
                  member.definition,
                  input.history,
                  String((args as { message?: unknown }).message ?? input.message),
                  memberSink(sink, steps, calls, false)
                ),
                (answer) => answer.reply
              ))
          }
        : {
            name: member.tool,
            description: member.description === "" ? `Runs the Flow "${member.name}" and answers its output.` : member.description,
            parameters: flowToolParameters(member.flow),
            run: (args) => Effect.zipRight(routeDecision(member, "model", []), deps.flowReply(input.actor, member.name, member.flow, args, recorder))
          }
    )
    const answer = yield* deps.runTurn(
      { model: "", instructions: supervisorInstructions(input.app, input.extraInstructions), history: input.history, message: input.message, tools },
      sink
    )
    return {
      reply: answer.reply,
      toolsCalled: [...answer.toolsCalled, ...calls],
      steps: [...answer.steps, ...steps].sort((a, b) => a.startedAt.localeCompare(b.startedAt))
    }
  })

/** Refuses a run of an App with no member to answer. */
export const noMembers = () =>
  new RunFailed({ message: "This App has no published member Agent or Flow to route to; nothing ran and nothing was charged." })
