/**
 * Group commit for `POST /end-users` without an Idempotency-Key where transactions run
 * concurrently (PostgreSQL; on SQLite each runs whole and synchronously, with nothing to share it
 * with, so `EndUserService` runs it directly): requests that arrive together are provisioned in one
 * transaction, each body in its own savepoint (`WriteTransactions.run` inside an
 * open transaction), so one request's fault rolls back only its own work. A transaction's fixed
 * cost (BEGIN, COMMIT, the pages written to the log) is paid once per batch instead of once per
 * account. Every caller is answered only after the batch committed; if the commit fails, every
 * caller of the batch gets that failure.
 */
import { Deferred, Effect, Exit, Queue } from "effect"
import type { TxBody, WriteTransactionsShape } from "../../platform/sql/write-fast-path.js"

/** Largest number of requests committed together. */
export const maxBatch = 64

interface Job<A> {
  readonly body: () => TxBody<A>
  readonly done: Deferred.Deferred<A>
}

/**
 * Starts a batcher (its worker lives as long as the scope) and answers `run`, which queues a
 * transaction body and waits for its outcome. Never call `run` inside a transaction: the batch
 * needs the connection the caller would be holding.
 */
export const startBatcher = <A>(writes: WriteTransactionsShape, inTransaction: <B, F>(effect: Effect.Effect<B, F>) => Effect.Effect<B, F>) =>
  Effect.gen(function* () {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Job<A>>(), Queue.shutdown)
    const commitBatch = (jobs: ReadonlyArray<Job<A>>) =>
      Effect.gen(function* () {
        const committed = yield* Effect.exit(
          jobs.length === 1 ? Effect.map(Effect.exit(writes.run(jobs[0]!.body)), (exit) => [exit]) : inTransaction(Effect.forEach(jobs, (job) => Effect.exit(writes.run(job.body))))
        )
        if (Exit.isFailure(committed)) {
          yield* Effect.forEach(jobs, (job) => Deferred.failCause(job.done, committed.cause), { discard: true })
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
      /** Runs `body` in the next batch and answers its outcome once the batch committed. */
      run: (body: () => TxBody<A>): Effect.Effect<A> =>
        Effect.gen(function* () {
          const done = yield* Deferred.make<A>()
          yield* Queue.offer(queue, { body, done })
          return yield* Deferred.await(done)
        })
    }
  })
