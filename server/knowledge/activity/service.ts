/**
 * Each key's (and later each MCP connection's) recent Knowledgebase activity: what was searched or
 * read and what came back. Search text is never stored: only a keyed fingerprint of it, so the same
 * query shows the same fingerprint and the text cannot be read back.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Queue } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { settingMadeOnceTx } from "../../platform/settings-repo.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { statementsOn } from "../../platform/sql/write-fast-path.js"
import { type ActivityEntryRow, activityOfKeyTx, insertActivityTx, trimActivityTx } from "./repo.js"

/** How many entries each key keeps. */
export const activityKept = 200

/** What was searched or read. */
export type ActivityAction = "search" | "read_knowledgebase" | "read_page" | "read_source"

/** One thing that came back. */
export interface ActivityResult {
  readonly kind: "document" | "page" | "memory" | "knowledgebase" | "source"
  readonly id: string
  readonly title?: string | undefined
}

/** An entry as recorded. */
export interface ActivityEntry {
  readonly action: ActivityAction
  readonly knowledgebaseId: string | null
  /** The search text, for a search: only its fingerprint is kept. */
  readonly query?: string | undefined
  readonly kinds?: ReadonlyArray<string> | undefined
  readonly results: ReadonlyArray<ActivityResult>
}

/** An entry as listed. */
export interface ActivityRecord {
  readonly at: string
  /** The MCP connection the entry came through, or null for REST calls. */
  readonly connectionId: string | null
  readonly action: ActivityAction
  readonly knowledgebaseId: string | null
  readonly queryFingerprint: string | null
  readonly kinds: ReadonlyArray<string> | null
  readonly resultCount: number
  readonly results: ReadonlyArray<ActivityResult>
}

const resultsKept = 20
/** How long an entry may wait before its batch is written. */
const flushDelayMs = 20
const secretSetting = "activity_fingerprint_secret"

/** The normalized form of search text that is fingerprinted (case and spacing do not matter). */
export const normalizeQuery = (text: string): string => text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim()

/** An entry ready to be written. */
type PendingEntry = ActivityEntryRow

/**
 * Records and lists recent Knowledgebase activity. Entries are written in batches, a few
 * milliseconds after they happen, in one short transaction: a read then costs no write of its own
 * (nor the cache invalidation every commit causes). Listing, `flush` and shutdown write what waits.
 */
export class ActivityLog extends Effect.Service<ActivityLog>()("svc/ActivityLog", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clock = yield* AppClock
    const inTransaction = transactionsOn(sql)
    const statements = statementsOn(sql)
    let secret: Buffer | null = null
    const secretKey = Effect.suspend(() =>
      secret
        ? Effect.succeed(secret)
        : Effect.map(statements(settingMadeOnceTx(secretSetting, randomBytes(32).toString("hex"))), (value) => {
            secret = Buffer.from(value, "hex")
            return secret
          })
    )

    /** The fingerprint of search text: `hmac-sha256:` and 16 hex digits. */
    const fingerprint = (text: string) =>
      Effect.map(secretKey, (key) => `hmac-sha256:${createHmac("sha256", key).update(normalizeQuery(text)).digest("hex").slice(0, 16)}`)

    const pending: Array<PendingEntry> = []
    const wake = yield* Queue.sliding<true>(1)

    const writing = yield* Effect.makeSemaphore(1)
    /**
     * Writes every waiting entry in one transaction, then trims each key to {@link activityKept}.
     * One flush at a time: a listing's flush waits for the batch in flight, so it reads every entry
     * and batches are numbered in the order they were taken (on PostgreSQL two transactions could
     * otherwise commit in either order).
     */
    const flush = writing.withPermits(1)(Effect.suspend(() => {
      if (pending.length === 0) return Effect.void
      const batch = pending.splice(0)
      return inTransaction(
        Effect.gen(function* () {
          for (const entry of batch) yield* statements(insertActivityTx(entry))
          for (const keyId of new Set(batch.map((entry) => entry.keyId))) yield* statements(trimActivityTx(keyId, activityKept))
        })
      ).pipe(Effect.orDie)
    }))

    yield* Effect.forkScoped(
      Effect.forever(
        Queue.take(wake).pipe(
          Effect.zipRight(Effect.sleep(Duration.millis(flushDelayMs))),
          // A batch taken from \`pending\` is written whole even when shutdown interrupts the loop
          // (on PostgreSQL the write is asynchronous, so an interruption could land inside it).
          Effect.zipRight(Effect.uninterruptible(flush)),
          Effect.catchAllCause((cause) => Effect.logError("activity not recorded", cause))
        )
      )
    )
    yield* Effect.addFinalizer(() => Effect.catchAllCause(flush, (cause) => Effect.logError("activity not recorded", cause)))

    return {
      /** Records an entry against the caller's key (written within a few milliseconds). */
      record: (actor: Principal, entry: ActivityEntry) =>
        Effect.gen(function* () {
          pending.push({
            organizationId: actor.organization.id,
            keyId: actor.key.id,
            connectionId: actor.connectionId ?? null,
            action: entry.action,
            knowledgebaseId: entry.knowledgebaseId,
            queryFingerprint: entry.query === undefined ? null : yield* Effect.orDie(fingerprint(entry.query)),
            detail: JSON.stringify({ kinds: entry.kinds ?? null, resultCount: entry.results.length, results: entry.results.slice(0, resultsKept) }),
            at: isoAt(clock.now())
          })
          yield* Queue.offer(wake, true)
        }),

      /** Writes the entries still waiting (tests and shutdown). */
      flush,

      /**
       * A key's recent activity, newest first (at most {@link activityKept} entries); only what came
       * through one MCP connection when `connectionId` is given.
       */
      forKey: (organizationId: string, keyId: string, limit = activityKept, connectionId?: string) =>
        Effect.zipRight(
          flush,
          statements(activityOfKeyTx<ActivityAction>(organizationId, keyId, limit, connectionId)).pipe(
            Effect.map((rows) =>
              rows.map((row): ActivityRecord => {
                const detail = JSON.parse(row.detail) as { kinds: Array<string> | null; resultCount: number; results: Array<ActivityResult> }
                return {
                  at: row.at,
                  connectionId: row.connection_id,
                  action: row.action,
                  knowledgebaseId: row.knowledgebase_id,
                  queryFingerprint: row.query_fingerprint,
                  kinds: detail.kinds,
                  resultCount: detail.resultCount,
                  results: detail.results
                }
              })
            )
          )
        )
    }
  })
}) {}
