/**
 * The one interface through which Agents, Flow `prompt` steps and App Supervisors call a model.
 * A turn is: instructions, bounded history, the new user message and the tools on offer; it
 * answers with the reply, the tools called and the steps taken, and reports `delta`, `tool` and
 * `step` events as they happen. Every expected failure is `RunFailed`; interrupting the turn stops
 * the model call in flight.
 */
import { Effect, FiberRef } from "effect"
import { isoAt } from "../platform/clock.js"
import type { RunFailed } from "../platform/errors.js"

/** One message of a conversation's history. */
export interface ChatTurn {
  readonly role: "user" | "assistant"
  readonly text: string
}

/** A JSON Schema (draft 2020-12) describing an object: a tool's parameters. */
export type JsonSchemaObject = Readonly<Record<string, unknown>> & { readonly type: "object" }

/** A tool offered to the model. `run` gets the arguments the model sent, parsed and valid under `parameters`. */
export interface ModelTool {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchemaObject
  readonly run: (args: unknown) => Effect.Effect<string, RunFailed>
}

/** What one turn asks of a model. */
export interface TurnRequest {
  /** The model's name (`builtin`, or a name the OpenAI-compatible endpoint knows); blank for the server's default. */
  readonly model: string
  /** System instructions; empty for none. */
  readonly instructions: string
  /** Earlier messages, oldest first (bounded by the history budget before they are sent). */
  readonly history: ReadonlyArray<ChatTurn>
  /** The new user message. */
  readonly message: string
  readonly tools: ReadonlyArray<ModelTool>
}

/** A tool the model called, with the arguments it gave. */
export interface ToolCall {
  readonly name: string
  readonly arguments: unknown
}

/** One timed step of a turn: a model call (`name` is the model) or a tool run (`name` is the tool). */
export interface TurnStep {
  readonly type: "model" | "tool"
  readonly name: string
  readonly startedAt: string
  readonly finishedAt: string
}

/** What a turn produced. `reply` is every `delta` of the turn joined. */
export interface TurnResult {
  readonly reply: string
  readonly toolsCalled: ReadonlyArray<ToolCall>
  readonly steps: ReadonlyArray<TurnStep>
}

/**
 * What a turn reports as it runs: text as it arrives, a tool about to run, and each step once it
 * finished (so a turn cut short still leaves a record of what it did).
 */
export type TurnEvent =
  | { readonly type: "delta"; readonly text: string }
  | { readonly type: "tool"; readonly name: string; readonly arguments: unknown }
  | { readonly type: "step"; readonly step: TurnStep }

/** Where a turn's events go (an SSE queue, a recorder); called in order, awaited before the turn goes on. */
export type TurnSink = (event: TurnEvent) => Effect.Effect<void>

/**
 * How the run being answered delivers its reply: `streamed` (the default) forwards text as it
 * arrives; `whole` returns it once complete (a run endpoint called without `stream: true`, an MCP
 * tool), which lets an OpenAI-compatible model be asked for one complete answer instead of a
 * stream: less work for the server, and no text to lose to a cancel, since nobody has seen any.
 */
export const ReplyDelivery: FiberRef.FiberRef<"streamed" | "whole"> = FiberRef.unsafeMake<"streamed" | "whole">("streamed")

/** Runs `effect` as a run whose reply is returned whole (see `ReplyDelivery`). */
export const deliverWhole = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.locally(effect, ReplyDelivery, "whole")

/** A sink that drops every event. */
export const ignoreEvents: TurnSink = () => Effect.void

/** One way of answering turns. */
export interface ModelImplementation {
  readonly runTurn: (request: TurnRequest, onEvent: TurnSink) => Effect.Effect<TurnResult, RunFailed>
}

/**
 * Runs `effect` as a step of type `type` named `name`, reporting the step to `onEvent` and adding
 * it to `steps` once it finished (successfully or not). Timed on the wall clock (`Date.now`),
 * which is what Effect's default clock reads, without a service lookup per reading.
 */
export const timedStep = <A, E, R>(
  type: TurnStep["type"],
  name: string,
  steps: { readonly push: (step: TurnStep) => unknown },
  onEvent: TurnSink,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const started = Date.now()
    return Effect.onExit(effect, () => {
      const step: TurnStep = { type, name, startedAt: isoAt(started), finishedAt: isoAt(Date.now()) }
      steps.push(step)
      return onEvent({ type: "step", step })
    })
  })
