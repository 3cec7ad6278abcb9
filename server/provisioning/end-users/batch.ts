/**
 * Group commit for `POST /end-users` without an Idempotency-Key: requests that arrive together are
 * provisioned in one transaction, each in its own savepoint, so one request's refusal or fault rolls
 * back only its own work. A transaction's fixed cost (BEGIN, COMMIT, the pages written to the log)
 * is paid once per batch instead of once per account. Every caller is answered only after the
 * batch committed; if the commit fails, every caller of the batch gets that failure.
 */
import type { SqlClient } from "@effect/sql"
import { Deferred, Effect, Exit, Queue } from "effect"

/** Largest number of requests committed together. */
export const maxBatch = 64

interface Job<A, E> {
  readonly work: Effect.Effect<A, E>
  readonly done: Deferred.Deferred<A, E>
}

/**
 * Starts a batcher (its worker lives as long as the scope) and answers `run`, which queues `work`
 * (database work only, no other I/O) and waits for its outcome. Never call `run` inside a
 * transaction: the batch needs the connection the caller would be holding.
 */
export const startBatcher = <A, E>(sql: SqlClient.SqlClient, inTransaction: <B, F>(effect: Effect.Effect<B, F>) => Effect.Effect<B, F>) =>
  Effect.gen(function* () {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Job<A, E>>(), Queue.shutdown)
    const commitBatch = (jobs: ReadonlyArray<Job<A, E>>) =>
      Effect.gen(function* () {
        const committed = yield* Effect.exit(
          inTransaction(Effect.forEach(jobs, (job) => Effect.exit(sql.withTransaction(job.work).pipe(Effect.catchTag("SqlError", Effect.die)))))
        )
        if (Exit.isFailure(committed)) {
          yield* Effect.forEach(jobs, (job) => Deferred.failCause(job.done, committed.cause as never), { discard: true })
          return
        }
        yield* Effect.forEach(jobs, (job, i) => Deferred.done(job.done, committed.value[i]!), { discard: true })
      })
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const first = yield* Queue.take(queue)
          const rest = yield* Queue.takeUpTo(queue, maxBatch - 1)
          yield* commitBatch([first, ...rest])
        })
      )
    )
    return {
      /** Runs `work` in the next batch and answers its outcome once the batch committed. */
      run: (work: Effect.Effect<A, E>): Effect.Effect<A, E> =>
        Effect.gen(function* () {
          const done = yield* Deferred.make<A, E>()
          yield* Queue.offer(queue, { work, done })
          return yield* Deferred.await(done)
        })
    }
  })
