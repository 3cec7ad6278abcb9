/**
 * Running a checked Flow's steps in order, each binding its variable: `template` renders,
 * `search` quotes the passages of its Knowledgebases with citations, `agent` asks a published
 * Agent one turn, `prompt` asks a model (with `builtin`, it echoes its prompt, marked as such).
 * Then the output is rendered. Every step is timed and recorded; no credit of its own is taken
 * (the execution pays one).
 */
import { Clock, Effect } from "effect"
import { isoAt } from "../../platform/clock.js"
import type { Principal } from "../../identity/domain.js"
import { RunFailed } from "../../platform/errors.js"
import type { SearchService } from "../../knowledge/search/service.js"
import type { AgentRepo } from "../../builder/agents/repo.js"
import { parseAgentDefinition } from "../../builder/agents/definition.js"
import type { CheckedFlow, CheckedStep } from "../../builder/flows/definition.js"
import { renderTemplate, type TemplateValue } from "../../builder/flows/templates.js"
import { citationOf } from "../builtin.js"
import type { ModelTool, ToolCall, TurnSink, TurnStep } from "../model.js"
import { decodeSearchToolOutput, searchToolName } from "../search-tool.js"
import type { ModelRuntime } from "../service.js"
import { knowledgeTool } from "../runs/knowledge-tool.js"

/** The services steps call. */
export interface StepServices {
  readonly search: SearchService
  readonly agents: AgentRepo
  readonly runtime: ModelRuntime
}

/** A timed step of a Flow's execution: one of its own steps (`type` the step's type) or a model call or tool run inside one. */
export interface FlowStepRecord {
  readonly type: CheckedStep["type"] | TurnStep["type"]
  readonly name: string
  readonly startedAt: string
  readonly finishedAt: string
}

/** Where a Flow's run reports: its timed steps, the tools called, and a `tool` event as each step starts. */
export interface FlowRecorder {
  /** Where each finished step (and each model or tool step inside it) is recorded. */
  readonly steps: { readonly push: (step: FlowStepRecord) => unknown }
  readonly toolsCalled: Array<ToolCall>
  readonly onStep: (name: string) => Effect.Effect<void>
}

/** What a Flow produced: its rendered output and each step's variable by step name. */
export interface FlowOutcome {
  readonly output: string
  readonly variables: Readonly<Record<string, string>>
}

/** The first line of a `prompt` step's variable when the `builtin` model answers it. */
export const builtinPromptNote = "[builtin model: no language model ran; this is the step's prompt as rendered]"

/** A `search` step's variable: each passage cited and quoted, blank lines between them; empty when none matched. */
export const passagesText = (passages: ReadonlyArray<{ readonly text: string; readonly source: string; readonly section: string | null }>): string =>
  passages.map((passage, i) => `[${i + 1}] ${citationOf(passage)}\n> ${passage.text.replace(/\s+/g, " ").trim()}`).join("\n\n")

/** A recorder that keeps a nested turn's steps and tools in the Flow's execution (its text events are not forwarded). */
const nestedSink =
  (recorder: FlowRecorder): TurnSink =>
  (event) =>
    Effect.sync(() => {
      if (event.type === "step") recorder.steps.push(event.step)
      else if (event.type === "tool") recorder.toolsCalled.push({ name: event.name, arguments: event.arguments })
    })

const runStep = (
  services: StepServices,
  actor: Principal,
  step: CheckedStep,
  values: Readonly<Record<string, TemplateValue>>,
  recorder: FlowRecorder
): Effect.Effect<string, RunFailed> => {
  switch (step.type) {
    case "template":
      return Effect.succeed(renderTemplate(step.template, values))
    case "search": {
      const query = renderTemplate(step.query, values).trim()
      const ids = step.knowledgebaseIds ?? []
      if (ids.length === 0 || query === "") return Effect.succeed("")
      const args = { query }
      recorder.toolsCalled.push({ name: searchToolName, arguments: args })
      return knowledgeTool(services.search, actor, ids)
        .run(args)
        .pipe(Effect.flatMap(decodeSearchToolOutput), Effect.map((found) => passagesText(found.passages)))
    }
    case "agent":
      return Effect.gen(function* () {
        const published = yield* services.agents.published(actor.organization.id, step.agentId)
        if (!published) return yield* new RunFailed({ message: `Step ${step.name}: the Agent '${step.agentId}' is not published or no longer exists.` })
        const agent = parseAgentDefinition(published.definition)
        const tools: Array<ModelTool> = agent.knowledgebaseIds.length === 0 ? [] : [knowledgeTool(services.search, actor, agent.knowledgebaseIds)]
        const message = renderTemplate(step.message, values)
        const result = yield* services.runtime.runTurn(
          { model: agent.model ?? "", instructions: agent.instructions, history: [], message, tools },
          nestedSink(recorder)
        )
        return result.reply
      })
    case "prompt": {
      const prompt = renderTemplate(step.template, values)
      if (services.runtime.resolve(step.model).provider === "builtin") return Effect.succeed(`${builtinPromptNote}\n${prompt}`)
      return services.runtime
        .runTurn({ model: step.model ?? "", instructions: "", history: [], message: prompt, tools: [] }, nestedSink(recorder))
        .pipe(Effect.map((result) => result.reply))
    }
  }
}

/**
 * Runs `flow`'s steps in order on `inputs` (the validated inputs, or `{message}`), then renders
 * its output. A step that fails fails the run (`RunFailed` naming the step when it is the Flow's own).
 */
export const executeFlow = (
  services: StepServices,
  actor: Principal,
  flow: CheckedFlow,
  inputs: Readonly<Record<string, TemplateValue>>,
  recorder: FlowRecorder
): Effect.Effect<FlowOutcome, RunFailed> =>
  Effect.gen(function* () {
    const values: Record<string, TemplateValue> = { ...inputs }
    const variables: Record<string, string> = {}
    for (const step of flow.steps) {
      yield* recorder.onStep(step.name)
      const started = yield* Clock.currentTimeMillis
      const value = yield* runStep(services, actor, step, values, recorder).pipe(
        Effect.onExit(() =>
          Effect.flatMap(Clock.currentTimeMillis, (finished) =>
            Effect.sync(() => void recorder.steps.push({ type: step.type, name: step.name, startedAt: isoAt(started), finishedAt: isoAt(finished) }))
          )
        )
      )
      values[step.name] = value
      variables[step.name] = value
    }
    return { output: renderTemplate(flow.output, values), variables }
  })
