/**
 * The write fast path: a hot write's whole transaction written once, as a generator over two
 * statements (`txAll`, `txRun`: SQL text with `?` placeholders and its parameters), and driven by
 * one of two forms.
 *
 * - SQLite: the body runs synchronously, start to COMMIT, as one better-sqlite3
 *   `db.transaction(...)` on the connection `@effect/sql` writes with, under the lock `@effect/sql`
 *   takes for it (`SqliteWriter.withConnection`), so it never interleaves with an `@effect/sql`
 *   transaction and costs no span, scope, fiber or statement cache lookup per statement. Called
 *   inside an `@effect/sql` transaction it runs as a savepoint of it.
 * - Portable (any other `SqlClient`, PostgreSQL): each statement through `@effect/sql` in
 *   `withTransaction`, placeholders numbered for PostgreSQL.
 *
 * A statement that writes declares the tables it writes (its last argument, `write-declaration.ts`),
 * for the caches.
 *
 * Bodies must not do network, model or file I/O, and refuse (return a refusal) before they write:
 * they cannot fail with a typed error. A statement error rolls the transaction back and dies, as
 * `transactionsOn` does.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import type Database from "better-sqlite3"
import { Effect, Option } from "effect"
import { transactionsOn } from "./database.js"
import { laterMarker } from "./statement-text.js"
import { SqliteWriter, type SqliteWriterShape } from "./sqlite-connection.js"
import { CurrentWrites, type WriteDeclaration } from "./write-declaration.js"

/** One statement a transaction body asks for. */
export interface TxStatement {
  readonly kind: "all" | "run"
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  /** The tables it writes, when it writes (`write-declaration.ts`). */
  readonly writes?: WriteDeclaration | undefined
}

/** A transaction body: yields statements, receives their rows, returns its result. */
export type TxBody<A> = Generator<TxStatement, A, unknown>

/**
 * Every row of a query (also `INSERT … RETURNING`, which declares what it writes), inside a
 * transaction body: `yield* txAll(…)`.
 */
export function* txAll<Row>(text: string, params: ReadonlyArray<unknown>, writes?: WriteDeclaration): Generator<TxStatement, ReadonlyArray<Row>, unknown> {
  return (yield { kind: "all", text, params, writes }) as ReadonlyArray<Row>
}

/** A statement run for its effect, inside a transaction body, declaring what it writes: `yield* txRun(…, writes)`. */
export function* txRun(text: string, params: ReadonlyArray<unknown>, writes?: WriteDeclaration): Generator<TxStatement, void, unknown> {
  yield { kind: "run", text, params, writes }
}

/** Runs transaction bodies. */
export interface WriteTransactionsShape {
  /** Runs `body` as one transaction (a savepoint when one is already open on this fiber). */
  readonly run: <A>(body: () => TxBody<A>) => Effect.Effect<A>
  /**
   * `true` when `run` takes a transaction from BEGIN to COMMIT synchronously (SQLite): nothing else
   * runs in this process meanwhile, so concurrent callers have no transaction to share.
   */
  readonly synchronous: boolean
  /**
   * {@link run}, but inside a transaction already open on this fiber the body's statements are part
   * of it, with no savepoint of their own (on PostgreSQL a round trip that carried nothing): a
   * statement failing dies and fails that whole transaction, where `run` would roll back only the
   * body. For bodies whose failure the caller never survives (an idempotency key's look-up and
   * stored answer); a caller that catches a body's fault and goes on (the end users' batch) uses
   * `run`. On SQLite the same as `run` (a savepoint costs no round trip there).
   */
  readonly joined: <A>(body: () => TxBody<A>) => Effect.Effect<A>
  /**
   * Runs `effect` as one transaction, or as a savepoint of the one this fiber holds; an expected
   * failure or a defect rolls it back. For Effect code that must commit with a body's writes (a
   * create and its stored answer, `idempotency.ts`). Time-boxed as `transactionsOn` (on SQLite
   * past its time box the fiber is interrupted, which rolls it back); network, model and file I/O
   * stay out of it.
   */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** A statement error as a defect, as `transactionsOn` treats it: the transaction rolled back and the request failed as a fault. */
const dieOnSqlError = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchSome(effect, (error) => (error instanceof SqlError ? Option.some(Effect.die(error)) : Option.none()))

/** Steps `body`, answering each statement with `execute`'s result. */
const driveSync = <A>(body: TxBody<A>, execute: (statement: TxStatement) => unknown): A => {
  let step = body.next()
  while (!step.done) step = body.next(execute(step.value))
  return step.value
}

/** The SQLite form: one synchronous better-sqlite3 transaction under the writer's lock. */
export const sqliteWriteTransactions = (writer: SqliteWriterShape): WriteTransactionsShape => {
  const statements = new Map<string, Database.Statement>()
  const prepare = (text: string) => {
    let statement = statements.get(text)
    if (!statement) {
      statement = writer.db.prepare(text)
      if (statements.size >= 500) statements.delete(statements.keys().next().value!)
      statements.set(text, statement)
    }
    return statement
  }
  const { generations } = writer
  const execute = (statement: TxStatement): unknown => {
    const prepared = prepare(statement.text)
    generations.noteStatement(statement.text, prepared.readonly, statement.writes)
    if (statement.kind === "all") return prepared.all(...statement.params)
    prepared.run(...statement.params)
    return undefined
  }
  const run = <A>(body: () => TxBody<A>): Effect.Effect<A> =>
    Effect.orDie(
      // IMMEDIATE: the write lock from BEGIN on, as every SQLite transaction of svc takes it (see sqlite-connection.ts).
      writer.withConnection((db) => db.transaction(() => driveSync(body(), execute)).immediate())
    )
  return {
    synchronous: true,
    transaction: (effect) => dieOnSqlError(writer.transaction(effect)),
    run,
    joined: run
  }
}

/** `?` placeholders as PostgreSQL's `$1, $2, …`, leaving quoted text alone. */
export const numberPlaceholders = (text: string): string => {
  let n = 0
  return text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\?/g, (match) => (match === "?" ? `$${++n}` : match))
}

/**
 * Runs a body's statements through `@effect/sql` in whatever transaction the caller already holds
 * (none is opened): the Effect methods of repositories over the same bodies the fast path runs.
 * On PostgreSQL, inside a transaction, a statement run for its effect alone (`txRun`) is sent with
 * the statement after it (`pg-deferred-statements.ts`); its failure then fails that statement.
 */
export const statementsOn =
  (sql: SqlClient.SqlClient) =>
  <A>(body: TxBody<A>): Effect.Effect<A> =>
    Effect.gen(function* () {
      let step = body.next()
      while (!step.done) {
        const statement = step.value
        // On PostgreSQL a statement run for its effect alone may ride on the next one (`laterMarker`).
        const text = sql.onDialectOrElse({
          pg: () => (statement.kind === "run" ? laterMarker : "") + numberPlaceholders(statement.text),
          orElse: () => statement.text
        })
        const run = sql.unsafe(text, statement.params as Array<unknown>)
        const rows = yield* Effect.orDie(statement.writes === undefined ? run : Effect.locally(run, CurrentWrites, statement.writes))
        step = body.next(statement.kind === "all" ? rows : undefined)
      }
      return step.value
    })

/** The portable form: every statement through `@effect/sql` in one `withTransaction`. */
export const portableWriteTransactions = (sql: SqlClient.SqlClient): WriteTransactionsShape => {
  const inTransaction = transactionsOn(sql)
  const statements = statementsOn(sql)
  return {
    synchronous: false,
    transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (held) =>
        Option.isSome(held)
          ? dieOnSqlError(sql.withTransaction(effect) as Effect.Effect<A, E, R>)
          : inTransaction(effect)
      ),
    run: <A>(body: () => TxBody<A>) => inTransaction(Effect.suspend(() => statements(body()))),
    joined: <A>(body: () => TxBody<A>) => {
      const ran = Effect.suspend(() => statements(body()))
      return Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (held) => (Option.isSome(held) ? ran : inTransaction(ran)))
    }
  }
}

/** The write fast path of this process's database (see the module comment). */
export class WriteTransactions extends Effect.Service<WriteTransactions>()("svc/WriteTransactions", {
  effect: Effect.gen(function* () {
    const writer = yield* Effect.serviceOption(SqliteWriter)
    const sql = yield* SqlClient.SqlClient
    return Option.isSome(writer) ? sqliteWriteTransactions(writer.value) : portableWriteTransactions(sql)
  })
}) {}
