/**
 * Idempotency keys for creates: the first response is kept for 24 hours per organization, address
 * and key; a replay returns it, a different body is `conflict`.
 *
 * Exactly once: the create's database work and its stored answer commit in one transaction that
 * first looks the key up, so there is no claim that a dead process could leave behind. Requests
 * racing on one key serialize on the write lock (SQLite), or, where two could both pass the lookup
 * (PostgreSQL), the second finds the key taken when it stores its answer, rolls back its create and
 * replays the first.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { type Cause, Data, Effect, Exit, Schedule } from "effect"
import { AppClock } from "./clock.js"
import { Conflict } from "./errors.js"
import { statementsOn, txAll, WriteTransactions } from "./sql/write-fast-path.js"
import { declareWrites, writing } from "./sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const idempotencyKeysWrites = declareWrites("idempotency_keys")

/** How long a stored response is replayed. */
export const idempotencyWindowMs = 24 * 60 * 60_000
/** Rounds of look-up-and-write before a key that keeps being taken under us is given up as a fault. */
const attempts = 3

/** Where a key applies and what was sent with it. */
export interface KeyedRequest {
  readonly organizationId: string
  /** Method and path, e.g. `POST /api/v1/knowledgebases`. */
  readonly address: string
  readonly key: string
  /** Fingerprint of the request body. */
  readonly requestHash: string
}

/** A response as stored: its status and JSON text. */
export interface StoredAnswer {
  readonly status: number
  readonly body: string
}

/** What running a keyed create produced. */
export type Outcome<E> =
  /** The key already held an answer for this body. */
  | { readonly _tag: "Replay"; readonly answer: StoredAnswer }
  /** The create ran now and committed with its answer. */
  | { readonly _tag: "Created"; readonly answer: StoredAnswer }
  /** The create was refused with an expected failure, which is stored and now returned. */
  | { readonly _tag: "Refused"; readonly error: E }

/** The key received an answer from a concurrent request between our look-up and our write. */
class KeyTaken extends Data.TaggedError("KeyTaken") {}

interface StoredRow {
  readonly request_hash: string
  readonly status: number
  readonly body: string
}

/** The live stored answer of a key, as a transaction body (`write-fast-path.ts`). */
function* storedRowTx(request: KeyedRequest, now: number) {
  const rows = yield* txAll<StoredRow>(
    `SELECT request_hash, status, body FROM idempotency_keys
     WHERE organization_id = ? AND address = ? AND key = ? AND state = 'done' AND expires_at > ?`,
    [request.organizationId, request.address, request.key, now]
  )
  return rows[0] ?? null
}

/** Stores an answer unless the key already holds a live one (then `false`), as a transaction body. */
function* storeAnswerTx(request: KeyedRequest, answer: StoredAnswer, now: number) {
  const written = yield* txAll<{ key: string }>(
    `INSERT INTO idempotency_keys (organization_id, address, key, request_hash, state, status, body, created_at, expires_at)
     VALUES (?, ?, ?, ?, 'done', ?, ?, ?, ?)
     ON CONFLICT (organization_id, address, key) DO UPDATE SET request_hash = excluded.request_hash, state = 'done',
       status = excluded.status, body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.state = 'running' OR idempotency_keys.expires_at <= ?
     RETURNING key`,
    [request.organizationId, request.address, request.key, request.requestHash, answer.status, answer.body, now, now + idempotencyWindowMs, now],
    idempotencyKeysWrites
  )
  return written.length > 0
}

const conflict = () => new Conflict({ message: "This Idempotency-Key was already used with a different request body." })

/** A stored row as an answer for `request`, or `conflict` when it was stored for another body. */
const answerOf = (request: KeyedRequest, row: StoredRow | null): Effect.Effect<StoredAnswer | null, Conflict> =>
  row === null ? Effect.succeed(null) : row.request_hash !== request.requestHash ? Effect.fail(conflict()) : Effect.succeed({ status: row.status, body: row.body })

/** The stored-response ledger. */
export class IdempotencyStore extends Effect.Service<IdempotencyStore>()("svc/IdempotencyStore", {
  dependencies: [WriteTransactions.Default],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clock = yield* AppClock
    const writes = yield* WriteTransactions
    /** A body's statements through `@effect/sql`, outside any transaction (the look-up before a create's). */
    const statements = statementsOn(sql)

    const purgeExpired = Effect.suspend(() => Effect.orDie(sql`DELETE FROM idempotency_keys WHERE expires_at <= ${clock.now()}`.pipe(writing(idempotencyKeysWrites))))
    yield* purgeExpired
    yield* Effect.forkScoped(Effect.repeat(purgeExpired, Schedule.spaced("1 hour")).pipe(Effect.delay("1 hour")))

    /**
     * The stored answer of a key, `null` when it holds none, or `conflict` for a different body. A
     * `running` row (written by versions that claimed keys before creating) belongs to a request
     * whose process died, since no request of this version leaves one: it holds no answer.
     */
    const lookup = (request: KeyedRequest) => Effect.flatMap(statements(storedRowTx(request, clock.now())), (row) => answerOf(request, row))

    /**
     * {@link lookup} inside the open transaction, through the write fast path (one synchronous step
     * on SQLite); part of that transaction, with no savepoint (`joined`): its failure fails the round.
     */
    const lookupInTransaction = (request: KeyedRequest) => Effect.flatMap(writes.joined(() => storedRowTx(request, clock.now())), (row) => answerOf(request, row))

    /** Stores an answer unless the key already holds a live one; `false` when it does (part of the round's transaction, as the look-up). */
    const store = (request: KeyedRequest, answer: StoredAnswer) => writes.joined(() => storeAnswerTx(request, answer, clock.now()))

    /**
     * One round in one transaction: the stored answer if the key holds one; else `write` (in a
     * savepoint) and its answer stored. A success or an expected failure that `refusal` turns into
     * an answer commits with that answer; any other failure rolls everything back, storing nothing.
     */
    const round = <E, R>(
      request: KeyedRequest,
      write: Effect.Effect<StoredAnswer, E, R>,
      refusal: (error: unknown) => StoredAnswer | undefined
    ): Effect.Effect<Outcome<E>, E | Conflict | KeyTaken, R> =>
      writes.transaction(
        Effect.gen(function* () {
          const stored = yield* lookupInTransaction(request)
          if (stored) return { _tag: "Replay", answer: stored } satisfies Outcome<E>
          const exit = yield* Effect.exit(writes.transaction(write))
          if (Exit.isFailure(exit)) {
            const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
            const answer = failure === undefined || failure instanceof SqlError ? undefined : refusal(failure)
            if (answer === undefined) return yield* Effect.failCause(exit.cause)
            if (!(yield* store(request, answer))) return yield* new KeyTaken()
            return { _tag: "Refused", error: failure as E } satisfies Outcome<E>
          }
          if (!(yield* store(request, exit.value))) return yield* new KeyTaken()
          return { _tag: "Created", answer: exit.value } satisfies Outcome<E>
        })
      ) as Effect.Effect<Outcome<E>, E | Conflict | KeyTaken, R>

    return {
      /** The stored answer of a key, `null` when it holds none, or `conflict` for a different body. */
      lookup,

      /**
       * Runs `write`, the database work of a create, exactly once per key: it commits in the same
       * transaction as its stored answer, or the stored answer is replayed. `refusal` gives the
       * answer to store for an expected failure (client errors), or `undefined` to store nothing.
       * Keep network, model and file I/O out of `write`: it runs inside the transaction.
       */
      once: <E, R>(
        request: KeyedRequest,
        write: Effect.Effect<StoredAnswer, E, R>,
        refusal: (error: unknown) => StoredAnswer | undefined
      ): Effect.Effect<Outcome<E>, E | Conflict, R> =>
        Effect.gen(function* () {
          for (let attempt = 1; ; attempt++) {
            const exit = yield* Effect.exit(round(request, write, refusal))
            if (Exit.isSuccess(exit)) return exit.value
            const taken = exit.cause._tag === "Fail" && exit.cause.error instanceof KeyTaken
            if (!taken) return yield* Effect.failCause(exit.cause as Cause.Cause<E | Conflict>)
            if (attempt >= attempts) return yield* Effect.dieMessage(`Idempotency-Key ${request.key} kept being taken`)
          }
        }),

      purgeExpired
    }
  })
}) {}
