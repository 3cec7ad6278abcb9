/**
 * Embeddings from an OpenAI-compatible endpoint through the `openai` client's `embeddings.create`:
 * inputs sent in batches of `batchSize`, each batch retried when the endpoint answers 429 or 5xx,
 * cannot be reached or does not answer within the timeout (waiting `backoffMs`, doubled each time,
 * or what `Retry-After` asks up to 10 s), the client's own retries off. Vectors come back at unit
 * length. Never call it inside a database transaction.
 */
import { Duration, Effect } from "effect"
import type OpenAI from "openai"
import { makeOpenAiClient } from "../../platform/model-fetch.js"
import { classifyProviderError } from "../../platform/provider-errors.js"
import type { EmbeddingSettings } from "./config.js"
import { unitVector } from "./vector.js"

/** Why texts could not be embedded; the message says what the endpoint did. */
export class EmbeddingFailed extends Error {
  readonly _tag = "EmbeddingFailed"
  override readonly name = "EmbeddingFailed"
}

/** How hard one call tries. */
export interface EmbedOptions {
  /** Attempts of each batch. */
  readonly attempts: number
  /** Longest one request may take. */
  readonly timeoutMs: number
}

/** Embeds texts with one model. */
export interface EmbeddingClient {
  /** The vectors of `texts`, in order, at unit length. */
  readonly embed: (texts: ReadonlyArray<string>, options?: Partial<EmbedOptions>) => Effect.Effect<Array<Float32Array>, EmbeddingFailed>
}

const maxRetryAfterMs = 10_000

/** The vectors of one answer, in input order; fails when it does not hold one vector of numbers per input. */
const vectorsOf = (response: OpenAI.CreateEmbeddingResponse, count: number): Array<Float32Array> => {
  const data = Array.isArray(response?.data) ? response.data : []
  const vectors: Array<Float32Array | undefined> = new Array(count)
  for (const item of data) {
    const index = item?.index
    const embedding = item?.embedding as unknown
    if (typeof index !== "number" || index < 0 || index >= count || !Array.isArray(embedding) || embedding.length === 0) continue
    if (!embedding.every((value) => typeof value === "number" && Number.isFinite(value))) continue
    vectors[index] = unitVector(embedding as Array<number>)
  }
  const missing = vectors.findIndex((vector) => vector === undefined)
  if (missing !== -1 || vectors.length !== count) {
    throw new EmbeddingFailed(`The embedding endpoint answered no usable vector for input ${missing === -1 ? count : missing + 1} of ${count}.`)
  }
  const dimensions = vectors[0]!.length
  if (vectors.some((vector) => vector!.length !== dimensions)) throw new EmbeddingFailed("The embedding endpoint answered vectors of different lengths.")
  return vectors as Array<Float32Array>
}

/** A client for `settings.model` at `settings.baseUrl`. */
export const makeEmbeddingClient = (settings: EmbeddingSettings & { readonly model: string; readonly baseUrl: string }): EmbeddingClient => {
  const apiKey = settings.apiKey
  const client = makeOpenAiClient({ baseUrl: settings.baseUrl, apiKey })

  const once = (input: ReadonlyArray<string>, timeoutMs: number) =>
    Effect.tryPromise({
      try: (signal) =>
        client.embeddings.create({ model: settings.model, input: [...input], encoding_format: "float" }, { signal, timeout: timeoutMs }),
      catch: (error) => error
    }).pipe(
      Effect.flatMap((response) =>
        Effect.try({ try: () => vectorsOf(response, input.length), catch: (error) => ({ final: error as EmbeddingFailed }) })
      )
    )

  const batch = (input: ReadonlyArray<string>, options: EmbedOptions): Effect.Effect<Array<Float32Array>, EmbeddingFailed> =>
    Effect.gen(function* () {
      let wait = settings.backoffMs
      for (let attempt = 1; ; attempt++) {
        const result = yield* Effect.either(once(input, options.timeoutMs))
        if (result._tag === "Right") return result.right
        const error = result.left
        if (typeof error === "object" && error !== null && "final" in error) return yield* Effect.fail(error.final as EmbeddingFailed)
        const failure = classifyProviderError(error, apiKey, Date.now())
        if (!failure.retryable || attempt >= options.attempts) {
          const tries = attempt === 1 ? "" : ` (${attempt} attempts)`
          return yield* Effect.fail(new EmbeddingFailed(`The embedding endpoint ${failure.description}${tries}.`))
        }
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > maxRetryAfterMs) {
          return yield* Effect.fail(new EmbeddingFailed(`The embedding endpoint ${failure.description} and asked to wait longer than ${maxRetryAfterMs / 1000} s.`))
        }
        yield* Effect.sleep(Duration.millis(failure.retryAfterMs ?? wait))
        wait *= 2
      }
    })

  return {
    embed: (texts, options = {}) => {
      const resolved: EmbedOptions = { attempts: options.attempts ?? settings.maxAttempts, timeoutMs: options.timeoutMs ?? settings.requestTimeoutMs }
      const batches: Array<ReadonlyArray<string>> = []
      for (let start = 0; start < texts.length; start += settings.batchSize) batches.push(texts.slice(start, start + settings.batchSize))
      return Effect.map(
        Effect.forEach(batches, (input) => batch(input, resolved)),
        (parts) => parts.flat()
      )
    }
  }
}
