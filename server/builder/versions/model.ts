/**
 * How reads of Agents and Apps show their model. A definition names a model or none (`null`: the
 * server's default, resolved at run time, so a server restarted with another default runs the new
 * one). Reads show the name it resolves to in `model` and say where it came from in `modelSource`.
 */
import { Effect, Schema } from "effect"
import { effectiveDefaultModel, ModelConfig } from "../../platform/model-config.js"

/** Where a read's `model` comes from. */
export const ModelSource = Schema.Literal("default", "explicit").annotations({
  identifier: "ModelSource",
  description:
    "`explicit`: the model was named and is kept; `default`: none was named, so `model` shows the server's default (`svc serve --model`, `SVC_MODEL`, else `builtin`), resolved again on every read and run."
})
export type ModelSource = typeof ModelSource.Type

/** The model as reads show it: its name and where it came from. */
export interface ShownModel {
  readonly model: string
  readonly modelSource: ModelSource
}

/** How `named` (a definition's model; null when it names none) reads on a server whose default is `serverDefault`. */
export const shownModel = (named: string | null, serverDefault: string): ShownModel =>
  named === null ? { model: serverDefault, modelSource: "default" } : { model: named, modelSource: "explicit" }

/** The server's default model as reads show it (`builtin` without a model endpoint). */
export const ServerDefaultModel: Effect.Effect<string, never, ModelConfig> = Effect.map(ModelConfig, effectiveDefaultModel)
