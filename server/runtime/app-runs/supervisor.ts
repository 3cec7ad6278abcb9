/**
 * The App Supervisor: routes a message to one member Agent, which answers with one Agent turn at
 * the version that runs. On the `builtin` model it routes by description (`routeByDescription`;
 * a message sharing no word with any member goes to the first member) and the member's reply is
 * the App's reply, streamed as it comes. On an OpenAI-compatible model the members are offered as
 * tools (`ask_<name>`, taking `{message}`) and the model routes and answers from what they said;
 * the members' own text is not streamed, their tool calls and steps are recorded.
 */
import { Effect } from "effect"
import type { Principal } from "../../platform/accounts/domain.js"
import type { AgentDefinition } from "../../builder/agents/domain.js"
import { RunFailed } from "../../platform/errors.js"
import { type ChatTurn, type ModelTool, timedStep, type ToolCall, type TurnResult, type TurnSink, type TurnStep } from "../model.js"
import { routeByDescription } from "../route.js"
import type { Member } from "./members.js"

/** What the Supervisor needs: the model runtime and one Agent turn (`RunService.agentReply`). */
export interface SupervisorDeps {
  readonly provider: "builtin" | "openai"
  readonly runTurn: (request: { model: string; instructions: string; history: ReadonlyArray<ChatTurn>; message: string; tools: ReadonlyArray<ModelTool> }, sink: TurnSink) => Effect.Effect<TurnResult, RunFailed>
  readonly agentReply: (actor: Principal, definition: AgentDefinition, history: ReadonlyArray<ChatTurn>, message: string, sink: TurnSink) => Effect.Effect<TurnResult, RunFailed>
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

/** The member `builtin` routes `message` to, and the words that matched (none when it fell back to the first member). */
export const builtinRoute = (message: string, members: ReadonlyArray<Member>): { member: Member; matched: ReadonlyArray<string> } => {
  const choice = routeByDescription(message, members)
  return choice === null ? { member: members[0]!, matched: [] } : { member: choice.member, matched: choice.matched }
}

/** A sink that records a member's steps and tool calls, forwarding them (and, when `forwardText`, its text) to `sink`. */
const memberSink = (sink: TurnSink, steps: Array<TurnStep>, calls: Array<ToolCall>, forwardText: boolean): TurnSink => (event) => {
  if (event.type === "step") steps.push(event.step)
  if (event.type === "tool") calls.push({ name: event.name, arguments: event.arguments })
  return event.type === "delta" && !forwardText ? Effect.void : sink(event)
}

/** Answers one message through a member Agent, reporting to `sink`; `members` is never empty. */
export const supervise = (deps: SupervisorDeps, input: SupervisedMessage, sink: TurnSink): Effect.Effect<TurnResult, RunFailed> =>
  Effect.gen(function* () {
    const steps: Array<TurnStep> = []
    const calls: Array<ToolCall> = []
    if (deps.provider === "builtin") {
      const { member, matched } = builtinRoute(input.message, input.members)
      const args = { message: input.message, member: member.id, version: member.version, matched }
      calls.push({ name: member.tool, arguments: args })
      yield* sink({ type: "tool", name: member.tool, arguments: args })
      const answer = yield* timedStep(
        "tool",
        member.tool,
        steps,
        sink,
        deps.agentReply(input.actor, member.definition, input.history, input.message, memberSink(sink, steps, calls, true))
      )
      return { reply: answer.reply, toolsCalled: calls, steps }
    }
    const tools: Array<ModelTool> = input.members.map((member) => ({
      name: member.tool,
      description: `Ask ${member.name}${member.description === "" ? "" : `: ${member.description}`}`,
      parameters: askParameters,
      run: (args) =>
        Effect.map(
          deps.agentReply(
            input.actor,
            member.definition,
            input.history,
            String((args as { message?: unknown }).message ?? input.message),
            memberSink(sink, steps, calls, false)
          ),
          (answer) => answer.reply
        )
    }))
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

/** Refuses a run of an App with no member Agent to answer. */
export const noMembers = () =>
  new RunFailed({ message: "This App has no published member Agent to route to; nothing ran and nothing was charged." })
