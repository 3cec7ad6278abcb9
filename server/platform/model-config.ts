/**
 * Settings of the model runtime: which OpenAI-compatible endpoint (if any) serves models, the
 * server's default model, and the bounds every turn keeps (tool steps, time, retries, history).
 * Read once at start-up from the environment (`SVC_MODEL_BASE_URL`, `SVC_MODEL_API_KEY`,
 * `SVC_MODEL`), the default model overridden by the server's `defaultModel` option (`svc serve
 * --model`); tests build the layer directly.
 */
import { Context, Layer } from "effect"

/** The name of the offline, deterministic retrieval model. */
export const builtinModel = "builtin"

/** How the runtime reaches and bounds models. */
export interface ModelSettings {
  /** Root of an OpenAI-compatible API (`http://localhost:11434/v1`); none means every run uses `builtin`. */
  readonly baseUrl: string | undefined
  /** Bearer key of that API; none sends no `Authorization` header (local servers need none). */
  readonly apiKey: string | undefined
  /**
   * The server's default model: what an Agent, a Flow `prompt` step or an App Supervisor that names
   * no model runs on (see `effectiveDefaultModel`).
   */
  readonly defaultModel: string
  /** Most model calls in one turn (each tool round is one more); a model still calling tools after them fails the run. */
  readonly maxSteps: number
  /** Longest one turn may take, model calls, retries and tools included. */
  readonly timeBudgetMs: number
  /** Longest the provider may take to answer one request with its headers. */
  readonly requestTimeoutMs: number
  /** Attempts of one model request when the provider answers 429 or 5xx or cannot be reached. */
  readonly maxAttempts: number
  /** Wait before the second attempt; doubled before each later one. */
  readonly backoffMs: number
  /** The longest `Retry-After` honoured; a provider asking for more fails the run at once. */
  readonly maxRetryAfterMs: number
  /** Tokens (estimated as characters / 4) of history plus the new message sent to the model. */
  readonly historyTokenBudget: number
}

/** The defaults: `builtin`, 8 steps, 2 minutes a turn, 3 attempts, a 6,000-token history. */
export const defaultModelSettings: ModelSettings = {
  baseUrl: undefined,
  apiKey: undefined,
  defaultModel: builtinModel,
  maxSteps: 8,
  timeBudgetMs: 120_000,
  requestTimeoutMs: 60_000,
  maxAttempts: 3,
  backoffMs: 500,
  maxRetryAfterMs: 10_000,
  historyTokenBudget: 6_000
}

/**
 * The model a run that names none uses, as reads show it: `defaultModel`, or `builtin` when no
 * endpoint is configured (without one every name runs on `builtin`).
 */
export const effectiveDefaultModel = (settings: Pick<ModelSettings, "baseUrl" | "defaultModel">): string =>
  settings.baseUrl === undefined ? builtinModel : settings.defaultModel

/** A configuration problem found at start-up. */
export class ModelConfigError extends Error {
  override readonly name = "ModelConfigError"
}

const nonBlank = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

/**
 * The settings named by the environment over the defaults; `defaultModel` (the server's option,
 * `svc serve --model`), when not blank, wins over `SVC_MODEL`. Throws `ModelConfigError` when
 * `SVC_MODEL_BASE_URL` is not an http(s) URL.
 */
export const modelSettingsFromEnv = (env: Readonly<Record<string, string | undefined>>, defaultModel?: string): ModelSettings => {
  const baseUrl = nonBlank(env.SVC_MODEL_BASE_URL)
  if (baseUrl !== undefined) {
    let protocol: string
    try {
      protocol = new URL(baseUrl).protocol
    } catch {
      throw new ModelConfigError(`SVC_MODEL_BASE_URL is not a URL: ${baseUrl}`)
    }
    if (protocol !== "http:" && protocol !== "https:") {
      throw new ModelConfigError(`SVC_MODEL_BASE_URL must be an http or https URL: ${baseUrl}`)
    }
  }
  return {
    ...defaultModelSettings,
    baseUrl: baseUrl?.replace(/\/+$/, ""),
    apiKey: nonBlank(env.SVC_MODEL_API_KEY),
    defaultModel: nonBlank(defaultModel) ?? nonBlank(env.SVC_MODEL) ?? builtinModel
  }
}

/** The model settings in effect. */
export class ModelConfig extends Context.Tag("svc/ModelConfig")<ModelConfig, ModelSettings>() {
  /** A layer with the defaults overridden by `overrides`. */
  static readonly layer = (overrides: Partial<ModelSettings> = {}) => Layer.succeed(ModelConfig, { ...defaultModelSettings, ...overrides })
  /** A layer read once from `env` (the process's environment by default), `defaultModel` (not blank) over `SVC_MODEL`. */
  static readonly fromEnv = (env: Readonly<Record<string, string | undefined>> = process.env, defaultModel?: string) =>
    Layer.sync(ModelConfig, () => modelSettingsFromEnv(env, defaultModel))
}
