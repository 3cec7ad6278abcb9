/**
 * The ingestion worker: takes queued jobs one at a time, fetches `url` sources (public addresses
 * only unless allowed), extracts text, chunks it and indexes the passages, then moves the source to
 * `ready` or `failed`. Each job is time-boxed. A claimed job records the instance running it. Jobs
 * survive restarts and crashes: on start, and every heartbeat while serving, jobs left running by
 * an instance that stopped or is gone (`InstanceRegistry`) are queued again, or fail once they were
 * interrupted too often. No network or file work happens inside a transaction.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InstanceRegistry, type RecoveryMoment, sweepEveryHeartbeat } from "../../platform/instances/registry.js"
import { safeFetchEffect } from "../../platform/net/safe-fetch.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { chunkText } from "./chunk.js"
import { detectType, ExtractionFailed, extractText } from "./extract.js"
import { IngestionConfig, seconds } from "./ingestion-config.js"
import { passageScope } from "../search/scope.js"
import { ChangeRepo } from "../changes/repo.js"
import { type JobRow, SourceRepo } from "./repo.js"
import { IngestionSignal, SourceService } from "./service.js"

/** Why a job did not index its source; the message becomes the source's `errorMessage`. */
class JobFailed extends Error {
  readonly _tag = "JobFailed"
}

const sentence = (text: string) => {
  const trimmed = text.trim()
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1)
  return /[.!?]$/.test(capital) ? capital : `${capital}.`
}

/** Runs the ingestion worker for as long as its scope is open, on the configured clock (polls, job time limits). */
export const IngestionWorkerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const sources = yield* SourceRepo
    const feed = yield* ChangeRepo
    const service = yield* SourceService
    const signal = yield* IngestionSignal
    const config = yield* IngestionConfig
    const clock = yield* AppClock
    const instance = yield* InstanceRegistry
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)
    const now = () => isoAt(clock.now())

    /** The original's bytes, fetching a `url` source first. */
    const originalOf = (sourceId: string, url: string | null, name: string) =>
      Effect.gen(function* () {
        const kept = yield* sources.original(sourceId)
        if (kept) return { bytes: new Uint8Array(kept.bytes), contentType: kept.content_type, type: detectType(name, kept.content_type) }
        if (url === null) return yield* Effect.fail(new JobFailed("The uploaded original is missing."))
        const fetched = yield* safeFetchEffect(url, {
          allowPrivate: config.allowPrivateUrls,
          classify: config.isPublic,
          maxBytes: config.fetchMaxBytes,
          timeoutMs: config.fetchTimeoutMs
        }).pipe(Effect.mapError((refused) => new JobFailed(sentence(refused.message))))
        const type = detectType(new URL(fetched.finalUrl).pathname, fetched.contentType ?? undefined) ?? detectType(undefined, "text/plain")
        const contentType = fetched.contentType ?? "application/octet-stream"
        yield* inTransaction(
          Effect.gen(function* () {
            yield* sources.keepOriginal(sourceId, contentType, fetched.bytes)
            yield* sources.setFetched(sourceId, {
              type: type ?? "txt",
              sizeBytes: fetched.bytes.byteLength,
              sha256: createHash("sha256").update(fetched.bytes).digest("hex")
            })
          })
        )
        return { bytes: fetched.bytes, contentType, type }
      })

    /** Fetches, extracts and chunks a source, then indexes it if it is still this job's. */
    const index = (job: JobRow) =>
      Effect.gen(function* () {
        const row = yield* sources.byIdUnscoped(job.source_id)
        if (!row || row.status !== "processing") return
        const original = yield* originalOf(row.id, row.url, row.url ?? row.name)
        const type = row.type === "url" ? original.type : row.type
        if (type === null || !["pdf", "csv", "txt", "md", "html"].includes(type)) {
          return yield* Effect.fail(new JobFailed(`The document's type (${original.contentType}) is not one that can be indexed.`))
        }
        const document = yield* Effect.tryPromise({
          try: () => extractText({ bytes: original.bytes, type: type as "pdf", name: row.name }),
          catch: (error) =>
            new JobFailed(error instanceof ExtractionFailed ? sentence(error.message) : "The document could not be read.")
        })
        const chunks = chunkText(document)
        if (chunks.length === 0) return yield* Effect.fail(new JobFailed("The document has no text to index."))
        yield* inTransaction(
          Effect.gen(function* () {
            const current = yield* sources.jobForUpdate(row.id)
            const live = yield* sources.byIdUnscoped(row.id)
            // Still this job: not requeued meanwhile (by an instance that judged this one gone) or claimed again.
            if (!current || current.attempts !== job.attempts || current.claimed_by !== job.claimed_by) return
            if (!live || live.status !== "processing") return
            const at = now()
            const attachedTo = yield* sources.attachments(row.id)
            yield* sources.replacePassages(row.id, passageScope(live.organization_id, attachedTo), chunks)
            yield* sources.setStatus(row.id, { status: "ready", errorMessage: null, at })
            yield* sources.finishJob(row.id)
            for (const knowledgebaseId of attachedTo) {
              yield* feed.record(live.organization_id, { knowledgebaseId, type: "source", id: row.id, change: "ready", changedAt: at })
            }
          })
        )
      })

    const run = (job: JobRow) =>
      index(job).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(config.jobTimeoutMs),
          onTimeout: () => new JobFailed(`Indexing did not finish within ${seconds(config.jobTimeoutMs)} and was stopped.`)
        }),
        Effect.catchAllCause((cause) =>
          Effect.gen(function* () {
            if (Cause.isInterrupted(cause)) return yield* Effect.failCause(cause)
            const failure = Cause.failureOption(cause)
            const known = failure._tag === "Some" && failure.value instanceof JobFailed
            if (!known) yield* Effect.logError("ingestion job failed", cause)
            yield* service.fail(job.source_id, known ? failure.value.message : "Indexing failed unexpectedly.")
          })
        )
      )

    /**
     * Requeues jobs left running by stopped or gone instances (which ones: `RecoveryMoment`); fails
     * those interrupted too often. Each job is first taken over by one conditional update, so two
     * instances recovering at once requeue or fail it once.
     */
    const recover = (moment: RecoveryMoment) =>
      Effect.gen(function* () {
        const claim = instance.recoverable(moment)
        // A read first, outside any transaction: the periodic sweep usually finds nothing.
        if ((yield* sources.runningJobs(claim)).length === 0) return
        const claimant = yield* instance.claimant
        const { exhausted, requeued } = yield* inTransaction(
          Effect.gen(function* () {
            const exhausted: Array<JobRow> = []
            let requeued = 0
            for (const job of yield* sources.runningJobs(claim)) {
              if (!(yield* sources.takeOverJob(job, claimant))) continue
              if (job.attempts >= config.maxAttempts) exhausted.push(job)
              else {
                yield* sources.requeue(job.source_id, now())
                requeued++
              }
            }
            return { exhausted, requeued }
          })
        )
        yield* Effect.forEach(
          exhausted,
          (job) => service.fail(job.source_id, `Indexing was interrupted ${job.attempts === 1 ? "once" : `${job.attempts} times`} (the server stopped while it ran); upload the document again.`),
          { discard: true }
        )
        if (requeued > 0) yield* signal.wake
      })

    /** One turn of the worker: runs the next queued job, else waits for a wake-up or the poll. */
    const turn = Effect.gen(function* () {
      const at = clock.now()
      const claimant = yield* instance.claimant
      const job = yield* inTransaction(sources.claimJob(isoAt(at), isoAt(at + config.jobTimeoutMs), claimant))
      if (job) return yield* run(job)
      yield* Effect.raceFirst(signal.wait, Effect.sleep(Duration.millis(config.pollMs)))
    })
    // A turn that fails (the database busy past its timeout: another process holding the write
    // lock) is logged and retried a second later: the worker never stops while the server runs.
    const loop = Effect.forever(
      turn.pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logWarning("ingestion worker: a turn failed; trying again in 1 s", cause).pipe(Effect.zipRight(Effect.sleep(Duration.seconds(1))))
        )
      )
    )

    // Before the worker starts (and so before the server listens): a read right after a restart must
    // find a job the stopped process left running already queued again, not past its deadline.
    yield* recover("startup").pipe(Effect.catchAllCause((cause) => Effect.logError("ingestion recovery failed", cause)))
    yield* sweepEveryHeartbeat(recover("sweep"), yield* Effect.scope)
    yield* Effect.forkScoped(
      (config.clock === undefined ? loop : Effect.withClock(loop, config.clock)).pipe(
        Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("ingestion worker stopped", cause)))
      )
    )
  })
)
