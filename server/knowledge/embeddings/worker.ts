/**
 * The embedding worker: while an embedding model is configured, it gives every indexed passage a
 * vector of that model, outside any transaction, `batchSize` passages a request. It needs no queue
 * of its own: a passage without a vector of the model is its work, so ingestion never waits for it,
 * a passage indexed while the endpoint was down (or the server stopped mid-batch) is embedded once
 * the worker runs again, and a change of model re-embeds everything. When the endpoint fails a
 * batch after every attempt, the worker waits `failurePauseMs` (doubled after each failure, up to 16
 * times) and tries again; lexical search is unaffected meanwhile. Between batches it looks for work
 * every `pollMs`, and queries the database only when a commit may have added passages.
 */
import { Cause, Duration, Effect, Layer } from "effect"
import { CacheVersions } from "../../platform/sql/cache-versions.js"
import { makeEmbeddingClient } from "./client.js"
import { EmbeddingConfig, isHybrid } from "./config.js"
import { PassageVectorRepo } from "./repo.js"

/** Runs the embedding worker for as long as its scope is open (nothing when search is lexical). */
export const EmbeddingWorkerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const settings = yield* EmbeddingConfig
    if (!isHybrid(settings)) return
    const repo = yield* PassageVectorRepo
    const client = makeEmbeddingClient(settings)
    const version = (yield* CacheVersions).of(["passages", "passage_vectors"])
    const maxPauseMs = settings.failurePauseMs * 16

    const loop = Effect.gen(function* () {
      let idleAt: number | null = null
      let pauseMs = settings.failurePauseMs
      while (true) {
        const seen = version()
        if (seen === idleAt) {
          yield* Effect.sleep(Duration.millis(settings.pollMs))
          continue
        }
        const batch = yield* repo.pending(settings.model, settings.batchSize)
        if (batch.length === 0) {
          idleAt = seen
          continue
        }
        const embedded = yield* Effect.either(client.embed(batch.map((passage) => passage.input)))
        if (embedded._tag === "Left") {
          yield* Effect.logWarning(`passage vectors wait: ${embedded.left.message} Trying again in ${Math.round(pauseMs / 1000)} s.`)
          yield* Effect.sleep(Duration.millis(pauseMs))
          pauseMs = Math.min(pauseMs * 2, maxPauseMs)
          continue
        }
        pauseMs = settings.failurePauseMs
        yield* repo.store(settings.model, batch.map((passage, i) => ({ passage, vector: embedded.right[i]! }))).pipe(
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : Effect.zipRight(Effect.logError("passage vectors could not be stored", cause), Effect.sleep(Duration.millis(pauseMs)))
          )
        )
      }
    })

    yield* Effect.forkScoped(
      loop.pipe(Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("embedding worker stopped", cause))))
    )
  })
)
