/**
 * Settings of hybrid search: which embedding model (if any) turns passages and queries into vectors,
 * the OpenAI-compatible endpoint that serves it, and the bounds of its calls. Read once at start-up
 * from the environment: `SVC_EMBEDDING_MODEL` (or `svc serve --embedding-model`), and
 * `SVC_EMBEDDING_BASE_URL` / `SVC_EMBEDDING_API_KEY`. When `SVC_EMBEDDING_BASE_URL` is unset the
 * chat endpoint's `SVC_MODEL_BASE_URL` and `SVC_MODEL_API_KEY` serve embeddings too (one local
 * server, such as Ollama, usually serves both); the chat key is never sent to another embedding
 * address. Hybrid search is on when a model is named and an endpoint is known; otherwise search
 * stays lexical.
 */
import { Context, Layer } from "effect"
import { ModelConfigError } from "../../platform/model-config.js"

/** How passages and queries are embedded. */
export interface EmbeddingSettings {
  /** The embedding model; null keeps search lexical. */
  readonly model: string | null
  /** Root of the OpenAI-compatible API serving `/embeddings` (`http://localhost:11434/v1`). */
  readonly baseUrl: string | undefined
  /** Bearer key of that API; none sends no `Authorization` header. */
  readonly apiKey: string | undefined
  /** Inputs sent in one `/embeddings` request at ingestion. */
  readonly batchSize: number
  /** Attempts of one ingestion request when the endpoint answers 429 or 5xx, or cannot be reached or answer in time. */
  readonly maxAttempts: number
  /** Wait before the second attempt; doubled before each later one. */
  readonly backoffMs: number
  /** Longest one ingestion request may take. */
  readonly requestTimeoutMs: number
  /** Longest the embedding of a search query may take (one attempt and one retry); past it search stays lexical. */
  readonly queryTimeoutMs: number
  /** How long a query's vector is kept for the same query text. */
  readonly queryCacheMs: number
  /** How often the embedding worker looks for passages without a vector when nothing told it of new ones. */
  readonly pollMs: number
  /** Wait after a batch failed every attempt before the worker tries again (doubled up to 16 times this). */
  readonly failurePauseMs: number
  /** On SQLite, rank with the `sqlite-vec` extension when it loads (false: the exact scan in JavaScript; tests and benchmarks compare both). */
  readonly sqliteVec: boolean
}

/** The defaults: no model (lexical search), 64 inputs a request, 4 attempts, 30 s a request. */
export const defaultEmbeddingSettings: EmbeddingSettings = {
  model: null,
  baseUrl: undefined,
  apiKey: undefined,
  batchSize: 64,
  maxAttempts: 4,
  backoffMs: 500,
  requestTimeoutMs: 30_000,
  queryTimeoutMs: 5_000,
  queryCacheMs: 60_000,
  pollMs: 1_000,
  failurePauseMs: 15_000,
  sqliteVec: true
}

const nonBlank = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

const checkedUrl = (name: string, value: string): string => {
  let protocol: string
  try {
    protocol = new URL(value).protocol
  } catch {
    throw new ModelConfigError(`${name} is not a URL: ${value}`)
  }
  if (protocol !== "http:" && protocol !== "https:") throw new ModelConfigError(`${name} must be an http or https URL: ${value}`)
  return value.replace(/\/+$/, "")
}

/**
 * The settings named by the environment over the defaults; `model` (`svc serve
 * --embedding-model`), when not blank, wins over `SVC_EMBEDDING_MODEL`. The endpoint is
 * `SVC_EMBEDDING_BASE_URL` with `SVC_EMBEDDING_API_KEY`, else the chat endpoint's
 * `SVC_MODEL_BASE_URL` with `SVC_MODEL_API_KEY`. A model without any endpoint leaves search lexical
 * (`model: null`; `svc serve` says why). Throws `ModelConfigError` when a base URL is not an http(s) URL.
 */
export const embeddingSettingsFromEnv = (env: Readonly<Record<string, string | undefined>>, model?: string): EmbeddingSettings => {
  const named = nonBlank(model) ?? nonBlank(env.SVC_EMBEDDING_MODEL)
  const own = nonBlank(env.SVC_EMBEDDING_BASE_URL)
  const chat = nonBlank(env.SVC_MODEL_BASE_URL)
  const endpoint =
    own !== undefined
      ? { baseUrl: checkedUrl("SVC_EMBEDDING_BASE_URL", own), apiKey: nonBlank(env.SVC_EMBEDDING_API_KEY) }
      : chat !== undefined
        ? { baseUrl: checkedUrl("SVC_MODEL_BASE_URL", chat), apiKey: nonBlank(env.SVC_EMBEDDING_API_KEY) ?? nonBlank(env.SVC_MODEL_API_KEY) }
        : { baseUrl: undefined, apiKey: undefined }
  return { ...defaultEmbeddingSettings, ...endpoint, model: endpoint.baseUrl === undefined ? null : (named ?? null) }
}

/** Whether search is hybrid: a model is named and an endpoint serves it. */
export const isHybrid = (settings: EmbeddingSettings): settings is EmbeddingSettings & { readonly model: string; readonly baseUrl: string } =>
  settings.model !== null && settings.baseUrl !== undefined

/** The embedding settings in effect. */
export class EmbeddingConfig extends Context.Tag("svc/EmbeddingConfig")<EmbeddingConfig, EmbeddingSettings>() {
  /** A layer with the defaults overridden by `overrides`. */
  static readonly layer = (overrides: Partial<EmbeddingSettings> = {}) => Layer.succeed(EmbeddingConfig, { ...defaultEmbeddingSettings, ...overrides })
  /** A layer read once from `env` (the process's environment by default), `model` (not blank) over `SVC_EMBEDDING_MODEL`. */
  static readonly fromEnv = (env: Readonly<Record<string, string | undefined>> = process.env, model?: string) =>
    Layer.sync(EmbeddingConfig, () => embeddingSettingsFromEnv(env, model))
}
