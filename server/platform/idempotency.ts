/**
 * Idempotency keys for creates: the first response is kept for 24 hours per organization, address
 * and key; a replay returns it, a different body or a request racing the first is `conflict`.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schedule } from "effect"
import { AppClock } from "./clock.js"
import { Conflict } from "./errors.js"

/** How long a stored response is replayed. */
export const idempotencyWindowMs = 24 * 60 * 60_000
/** A `running` claim older than this is taken to belong to a request that died with its process. */
const abandonedAfterMs = 5 * 60_000

/** What a claim on a key found. */
export type Claim =
  | { readonly _tag: "Fresh" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string }

/** The stored-response ledger. */
export class IdempotencyStore extends Effect.Service<IdempotencyStore>()("svc/IdempotencyStore", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clock = yield* AppClock

    const purgeExpired = Effect.orDie(sql`DELETE FROM idempotency_keys WHERE expires_at <= ${clock.now()}`)
    yield* purgeExpired
    yield* Effect.forkScoped(Effect.repeat(Effect.suspend(() => purgeExpired), Schedule.spaced("1 hour")).pipe(Effect.delay("1 hour")))

    return {
      /** Claims `key` for a request, or returns the stored response, or fails with `conflict`. */
      claim: (organizationId: string, address: string, key: string, requestHash: string) =>
        Effect.gen(function* () {
          const now = clock.now()
          return yield* sql.withTransaction(
            Effect.gen(function* () {
              const rows = yield* sql<{
                request_hash: string
                state: "running" | "done"
                status: number | null
                body: string | null
                created_at: number
                expires_at: number
              }>`SELECT request_hash, state, status, body, created_at, expires_at FROM idempotency_keys
                 WHERE organization_id = ${organizationId} AND address = ${address} AND key = ${key}`
              const row = rows[0]
              const stale =
                row !== undefined && (row.expires_at <= now || (row.state === "running" && now - row.created_at > abandonedAfterMs))
              if (row && !stale) {
                if (row.request_hash !== requestHash) {
                  return yield* new Conflict({
                    message: "This Idempotency-Key was already used with a different request body."
                  })
                }
                if (row.state === "running") {
                  return yield* new Conflict({
                    message: "A request with this Idempotency-Key is still being processed; retry shortly."
                  })
                }
                return { _tag: "Replay", status: row.status ?? 200, body: row.body ?? "null" } satisfies Claim
              }
              yield* sql`INSERT INTO idempotency_keys (organization_id, address, key, request_hash, state, created_at, expires_at)
                VALUES (${organizationId}, ${address}, ${key}, ${requestHash}, 'running', ${now}, ${now + idempotencyWindowMs})
                ON CONFLICT (organization_id, address, key) DO UPDATE SET request_hash = excluded.request_hash,
                  state = 'running', status = NULL, body = NULL, created_at = excluded.created_at,
                  expires_at = excluded.expires_at`
              return { _tag: "Fresh" } satisfies Claim
            })
          )
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      /** Stores the response of a claimed key. */
      complete: (organizationId: string, address: string, key: string, status: number, body: string) =>
        Effect.orDie(sql`UPDATE idempotency_keys SET state = 'done', status = ${status}, body = ${body}
          WHERE organization_id = ${organizationId} AND address = ${address} AND key = ${key}`),

      /** Releases a claim whose request failed on our side, so a retry runs again. */
      release: (organizationId: string, address: string, key: string) =>
        Effect.orDie(sql`DELETE FROM idempotency_keys
          WHERE organization_id = ${organizationId} AND address = ${address} AND key = ${key} AND state = 'running'`),

      purgeExpired
    }
  })
}) {}
