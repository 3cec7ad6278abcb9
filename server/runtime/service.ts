/**
 * The model runtime: the one service runs call. It resolves a model name (none means the server's
 * default: `svc serve --model`, `SVC_MODEL`, then `builtin`) at run time, picks the implementation (`builtin` when the name is `builtin` or
 * no endpoint is configured, else the OpenAI-compatible endpoint), bounds the history by the token
 * budget and runs the turn.
 */
import { Effect } from "effect"
import type { RunFailed } from "../platform/errors.js"
import { builtinImplementation } from "./builtin.js"
import { builtinModel, ModelConfig } from "../platform/model-config.js"
import { boundHistory } from "./history.js"
import { ignoreEvents, type ModelImplementation, type TurnRequest, type TurnResult, type TurnSink } from "./model.js"
import { makeOpenAiImplementation } from "./openai.js"

/** The model a run will use: its name and which implementation answers for it. */
export interface ResolvedModel {
  readonly model: string
  readonly provider: "builtin" | "openai"
}

/** Runs turns on the configured models. */
export class ModelRuntime extends Effect.Service<ModelRuntime>()("svc/ModelRuntime", {
  effect: Effect.gen(function* () {
    const settings = yield* ModelConfig
    const baseUrl = settings.baseUrl
    const openai: ModelImplementation | undefined = baseUrl === undefined ? undefined : makeOpenAiImplementation({ ...settings, baseUrl })

    /**
     * The model that answers for `name` (an Agent's `model`; blank or absent means the default).
     * Without an endpoint every name resolves to `builtin`, so what ran is what is recorded.
     */
    const resolve = (name?: string | null): ResolvedModel => {
      const wanted = name?.trim() || settings.defaultModel
      return wanted === builtinModel || openai === undefined ? { model: builtinModel, provider: "builtin" } : { model: wanted, provider: "openai" }
    }

    /**
     * Runs one turn on the model `request.model` resolves to, with the history bounded by
     * `historyTokenBudget`, reporting events to `onEvent`.
     */
    const runTurn = (request: TurnRequest, onEvent: TurnSink = ignoreEvents): Effect.Effect<TurnResult, RunFailed> => {
      const { model, provider } = resolve(request.model)
      const history = boundHistory(request.history, request.message, settings.historyTokenBudget)
      const implementation = provider === "openai" && openai !== undefined ? openai : builtinImplementation
      return implementation.runTurn({ ...request, model, history }, onEvent)
    }

    return { resolve, runTurn } as const
  })
}) {}
