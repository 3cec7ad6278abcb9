/**
 * The instance registry: which serving processes are alive. A process that claims work (an
 * ingestion job, an execution) registers first: a `service_instances` row whose lease
 * (`alive_until`) a heartbeat renews every `heartbeatMs` for `leaseBeats` heartbeats, removed when
 * the process closes cleanly. Work records its claimant (`claimed_by`); recovery takes over only
 * work whose claimant is gone. Leases are read and written on the database's clock, so instances on
 * hosts whose clocks disagree still agree on who is gone.
 */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Cause, Duration, Effect, Schedule, Scope } from "effect"
import { hostname } from "node:os"
import { isoAt } from "../clock.js"
import { newId } from "../ids.js"
import { InstanceSettings, leaseMs } from "./settings.js"
import { unversionedMarker } from "../sql/statement-text.js"
import { declareWrites, writing } from "../sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const serviceInstancesWrites = declareWrites("service_instances")

/**
 * Milliseconds since the epoch on the database's clock, as SQL (a dialect seam: SQLite's
 * `julianday('now')`, PostgreSQL's `clock_timestamp()`).
 */
export const databaseNowMs = (sql: SqlClient.SqlClient): Fragment =>
  sql.literal(
    sql.onDialectOrElse({
      pg: () => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
      orElse: () => "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    })
  )

/** This process's place in the registry. */
export class InstanceRegistry extends Effect.Service<InstanceRegistry>()("svc/InstanceRegistry", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* InstanceSettings
    const scope = yield* Effect.scope
    // The clock of the layer's build: a caller on a test clock still registers a heartbeat on this one.
    const clock = yield* Effect.clock
    const id = newId()
    const lease = leaseMs(settings)
    const now = databaseNowMs(sql)
    let registered = false
    const goneOf = (claimedBy: Fragment) => sql`(${claimedBy} IS NOT NULL AND ${claimedBy} <> ${id} AND NOT EXISTS (
      SELECT 1 FROM service_instances live WHERE live.id = ${claimedBy} AND live.alive_until >= ${now}))`
    const goneClaim = goneOf(sql.literal("claimed_by"))
    const startupClaim = sql`(claimed_by IS NULL OR ${goneClaim})`
    const otherClaim = sql`(claimed_by IS NULL OR claimed_by <> ${id})`

    /** Writes the row, or renews its lease (written again if it was removed meanwhile, after a stall past the lease). */
    // Marked: a beat moves no data version on PostgreSQL (no cache reads this table).
    const beat = sql`${sql.literal(unversionedMarker)}INSERT INTO service_instances (id, host, pid, started_at, alive_until)
      VALUES (${id}, ${hostname()}, ${process.pid}, ${isoAt(Date.now())}, ${now} + ${lease})
      ON CONFLICT (id) DO UPDATE SET alive_until = excluded.alive_until`.pipe(writing(serviceInstancesWrites))
    const heartbeat = Effect.repeat(
      beat.pipe(Effect.catchAllCause((cause) => Effect.logWarning("instance heartbeat failed", Cause.squash(cause)))),
      Schedule.spaced(Duration.millis(settings.heartbeatMs))
    )
    const registerNow = Effect.gen(function* () {
      // Rows of instances gone for a while are forgotten (their work is recoverable with or without them).
      yield* Effect.orDie(sql`DELETE FROM service_instances WHERE alive_until < ${now} - ${lease}`.pipe(writing(serviceInstancesWrites)))
      yield* Effect.orDie(beat)
      // Interruptible whatever the caller is (a turn registers from inside its uninterruptible part), so closing the scope stops it.
      yield* Effect.forkIn(Effect.interruptible(Effect.withClock(Effect.delay(heartbeat, Duration.millis(settings.heartbeatMs)), clock)), scope)
      registered = true
      return id
    })
    const once = yield* Effect.makeSemaphore(1)
    /** Registers on first use; a registration that failed (the database unreachable) is tried again by the next claim. */
    const claimant = Effect.suspend(() =>
      registered ? Effect.succeed(id) : once.withPermits(1)(Effect.suspend(() => (registered ? Effect.succeed(id) : registerNow)))
    )
    yield* Effect.addFinalizer(() => (registered ? Effect.ignore(sql`DELETE FROM service_instances WHERE id = ${id}`.pipe(writing(serviceInstancesWrites))) : Effect.void))

    return {
      /** This process's instance id (registered or not). */
      id,
      /** Registers this process on first use (its row and heartbeat); answers its id, to record on work it claims. */
      claimant,
      /** SQL: whether the instance a column names (`table.claimed_by`, qualified where a bare name is ambiguous) is another one, and gone. */
      claimantGone: goneOf,
      /** SQL: which running rows (by their `claimed_by`) recovery at `moment` takes over (see `RecoveryMoment`). */
      recoverable: (moment: RecoveryMoment): Fragment => (moment === "sweep" ? goneClaim : sql.onDialectOrElse({ pg: () => startupClaim, orElse: () => otherClaim }))
    }
  })
}) {}

/**
 * When recovery runs, which decides what it takes over:
 * - `startup`: before the process serves. On PostgreSQL, work of gone instances and work no
 *   instance claimed (left by a version before the registry); on SQLite every running row not this
 *   process's, since one process owns the data directory and whatever runs was left by a stopped one.
 * - `sweep`: every heartbeat while serving, by every live instance: work whose claimant is gone.
 */
export type RecoveryMoment = "startup" | "sweep"

/** Runs `sweep` every heartbeat for as long as `scope` is open, logging and carrying on past failures. */
export const sweepEveryHeartbeat = <A, E, R>(sweep: Effect.Effect<A, E, R>, scope: Scope.Scope) =>
  Effect.flatMap(InstanceSettings, (settings) =>
    Effect.forkIn(
      Effect.forever(
        Effect.delay(sweep, Duration.millis(settings.heartbeatMs)).pipe(
          Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logError("recovery sweep failed", cause)))
        )
      ),
      scope
    )
  )
