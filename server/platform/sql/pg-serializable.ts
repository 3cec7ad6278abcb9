/**
 * Write transactions on PostgreSQL without a lock shared by every write (issue 24): each runs at
 * `SERIALIZABLE`, so PostgreSQL itself fails one of two transactions whose reads and writes
 * interleave in a way no serial order explains (a read-then-write of the same rows: a credit
 * balance, a unique name checked before its insert, the next version or sequence number, an
 * idempotency key looked up before its answer is stored), and the failed one is run again from
 * its start (a unique violation a few times too: the look-up's index may not be the
 * constraint's). Transactions that touch different rows (two organizations, two Knowledgebases)
 * run in parallel on any instances. A deadlock between two writers is retried the same way.
 *
 * Re-runs alone would not do: under contention on the same rows (creates into one organization)
 * transactions lost to each other until they gave up. So every first run holds its organization's
 * advisory lock shared, which never makes writers wait for each other, and a re-run takes it
 * alone: it waits for its organization's transactions under way and holds new ones back while it
 * runs, so it cannot lose to them again (`contendedLock`). For a second after one of its
 * transactions lost, an organization's next transactions on this instance start that way too
 * (`contendedForMs`): under steady contention first runs in parallel mostly lose, each then paid
 * twice. No lock is shared by the writes of
 * different organizations: the organization is the one the request acts for
 * (`acting-organization.ts`), the service's own work (sweeps, jobs) has a key of its own.
 *
 * Only the outermost transaction is set and retried: a nested one is a savepoint of it, and once
 * a transaction lost, only its whole re-run can win. Bodies hold no network, model or file I/O
 * (`transactionsOn`), so running one again repeats nothing but its statements.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Chunk, Effect, FiberRef, Option } from "effect"
import { ActingOrganization, organizationLockKey } from "./acting-organization.js"
import { laterMarker } from "./statement-text.js"

/** PostgreSQL's codes of a transaction that lost to another: serialization failure, deadlock. */
const lostRaceCodes: ReadonlySet<string> = new Set(["40001", "40P01"])
/**
 * A unique violation: a lost race when the row in the way was committed after this transaction's
 * snapshot (an insert after a look-up that could not see it; PostgreSQL reports it as such, not as
 * a serialization failure, unless the look-up went through the same index), a real duplicate
 * otherwise. A re-run tells them apart: it sees the committed row and takes its other path.
 */
const uniqueViolation = "23505"

/** How many times a transaction that keeps losing is run before its failure is let through. */
export const lostRaceAttempts = 30
/** How many of those may be re-runs after a unique violation (a real duplicate fails the same each time). */
export const uniqueViolationAttempts = 3

/** PostgreSQL's code of `error`, or of an error it wraps. */
const codeOf = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; current !== null && typeof current === "object" && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** The codes of a transaction's failure (errors and defects: statements often die). */
const codesOf = (cause: Cause.Cause<unknown>): Array<string> =>
  [...Chunk.toReadonlyArray(Cause.failures(cause)), ...Chunk.toReadonlyArray(Cause.defects(cause))].flatMap((error) => codeOf(error) ?? [])

/** How a transaction lost, if it did: a race proper, a unique violation that may be one, or not at all. */
export const lostRace = (cause: Cause.Cause<unknown>): "race" | "unique" | null => {
  const codes = codesOf(cause)
  if (codes.some((code) => lostRaceCodes.has(code))) return "race"
  if (codes.includes(uniqueViolation)) return "unique"
  return null
}

/** Outside any transaction on this fiber (the next `withTransaction` is a `BEGIN`, not a savepoint). */
const outermost: Effect.Effect<boolean> = Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), Option.isNone)

/** After this many losses a re-run takes the lock of re-runs alone (`contendedLock`) before it starts. */
export const lossesBeforeQueueing = 1

/**
 * The first half of the advisory locks of write transactions, one per organization (the second
 * half is `organizationLockKey`): every first run takes its organization's shared (shared holders
 * never wait for each other, so writes run in parallel on every instance); a re-run that lost
 * takes it alone, waiting for its organization's transactions under way and holding new ones back
 * until it commits, so it cannot lose to them again. Transactions that keep colliding (the bench's
 * creates into one organization, appends to one page) then cost one lost run each instead of
 * failing each other until they give up, which they did with re-runs alone.
 */
export const contendedLock = 7_134_002

/** Whether the transaction being run is a re-run that takes `contendedLock` alone. */
const queued = FiberRef.unsafeMake(false)

/** The isolation and the organization's lock of a first run, in one round trip. */
const firstRun = (key: number): string =>
  `SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; SELECT pg_advisory_xact_lock_shared(${contendedLock}, ${key})`
/**
 * A re-run stays at READ COMMITTED: a SERIALIZABLE one would take its snapshot with the lock's
 * statement, before the transactions it waited for commit, and lose to them again. Alone under
 * its organization's lock, each statement sees every commit before it, as under the old write
 * lock; the writes of other organizations touch other rows (or shared ones by single conditional
 * statements: an end user's identity upserted, a sweep's `WHERE status = 'running'`).
 */
const reRun = (key: number): string => `SELECT pg_advisory_xact_lock(${contendedLock}, ${key})`

/**
 * How long after one of its write transactions lost a race an organization's next ones start as
 * re-runs do, alone under its lock, on this instance. Under steady contention (creates into one
 * organization: each reads the count its plan caps, then inserts) nearly every first run lost,
 * so it was run twice and held back the others while it ran again; started alone, each runs once.
 * Once no transaction lost for this long, first runs go back to running in parallel.
 */
export const contendedForMs = 1_000

/** When a write transaction of each organization (its lock key) last lost a race on this instance. */
const lastLoss = new Map<number, number>()

/** Records that a transaction of `key`'s organization lost a race now. */
const noteLoss = (key: number): void => {
  const now = performance.now()
  if (lastLoss.size >= 10_000) for (const [k, at] of lastLoss) if (now - at > contendedForMs) lastLoss.delete(k)
  lastLoss.set(key, now)
}

/** Whether `key`'s organization lost a race within {@link contendedForMs}. */
const contended = (key: number): boolean => {
  const at = lastLoss.get(key)
  return at !== undefined && performance.now() - at <= contendedForMs
}

/**
 * The first statement of a write transaction on PostgreSQL, when it is the outermost:
 * `SERIALIZABLE` and its organization's lock shared or, for a re-run that lost or a transaction of
 * an organization whose transactions lost lately (`contendedForMs`), that lock alone at READ
 * COMMITTED.
 */
export const serializable = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
    Option.isNone(open) || open.value[1] !== 0
      ? Effect.void
      : Effect.flatMap(FiberRef.get(queued), (queue) =>
          Effect.flatMap(FiberRef.get(ActingOrganization), (organization) => {
            const key = organizationLockKey(organization)
            // Nobody reads its answer: it rides on the transaction's next statement, with BEGIN (`laterMarker`).
            return Effect.asVoid(sql.unsafe(laterMarker + (queue || contended(key) ? reRun(key) : firstRun(key))))
          })
        )
  )

/**
 * `transaction` (a whole `withTransaction`) run again while it loses a race, after a short random
 * pause that grows with each loss, when it is the outermost; as it is otherwise.
 */
export const retriedWhileLosing = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.zip(outermost, FiberRef.get(ActingOrganization)), ([isOutermost, organization]) => {
    if (!isOutermost) return transaction
    const attempt = (n: number, uniques: number): Effect.Effect<A, E, R> =>
      Effect.catchAllCause(transaction, (cause) => {
        const lost = n < lostRaceAttempts ? lostRace(cause) : null
        if (lost === null || (lost === "unique" && uniques >= uniqueViolationAttempts)) return Effect.failCause(cause)
        if (lost === "race") noteLoss(organizationLockKey(organization))
        const again = Effect.locally(attempt(n + 1, uniques + (lost === "unique" ? 1 : 0)), queued, n >= lossesBeforeQueueing)
        return Effect.zipRight(Effect.sleep(Math.random() * Math.min(50, 2 ** n)), again)
      })
    return Effect.locally(attempt(1, 0), queued, false)
  })
