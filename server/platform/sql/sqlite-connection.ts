/**
 * The SQLite client, built here rather than by `SqliteClient.layer` so that the one writer
 * connection and the lock `@effect/sql` serializes it with are reachable: the write fast path
 * (`write-fast-path.ts`) runs whole transactions synchronously on that connection under that lock,
 * and the caches (`cache-versions.ts`) read the connection's own `PRAGMA data_version` and the
 * tables its commits wrote (`write-tracking.ts`: what each statement declares it writes, from
 * `CurrentWrites`, `write-declaration.ts`). Everything else is what
 * `@effect/sql-sqlite-node`'s `make` does: WAL, a prepared-statement cache, transactions through
 * `@effect/sql`, the same `SqliteClient` and `SqlClient` tags; transaction control statements
 * (BEGIN, COMMIT, savepoints) are prepared once instead of on every transaction.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { SqliteClient } from "@effect/sql-sqlite-node"
import Database from "better-sqlite3"
import { Cache, Chunk, Context, Duration, Effect, Exit, FiberRef, Layer, Option, Scope, Stream } from "effect"
import { CurrentWrites, type WriteDeclaration } from "./write-declaration.js"
import { type WriteGenerations, writeGenerations } from "./write-tracking.js"

/** The writer connection of this process and the lock every use of it takes. */
export interface SqliteWriterShape {
  /** The connection `@effect/sql` runs every statement of this process's writes on. */
  readonly db: Database.Database
  /**
   * Runs `use` synchronously with the connection to itself: under the lock, or at once when the
   * calling fiber already holds it through an `@effect/sql` transaction.
   */
  readonly withConnection: <A>(use: (db: Database.Database) => A) => Effect.Effect<A, SqlError>
  /** The tables this process's commits changed (`write-tracking.ts`). */
  readonly generations: WriteGenerations
  /** Runs one prepared statement with the write tracking (see `onWriter` in `makeSqliteClient`). */
  readonly onWriter: <T>(statement: Database.Statement, text: string, declared: WriteDeclaration | undefined, use: () => T) => T
  /**
   * Whether no fiber holds the lock and no transaction is open: a synchronous read may then run
   * on the connection (see `read-connection.ts`), nothing can begin a write before it ends.
   */
  readonly idle: () => boolean
  /**
   * Runs `effect` in one transaction on the writer under the lock (`BEGIN IMMEDIATE` … `COMMIT`,
   * observed by the write tracking), or in a savepoint of the transaction the fiber already holds:
   * what `SqlClient.withTransaction` does, without its span, scope and statement look-ups, for
   * write paths that run on every request (`WriteTransactions.transaction`). `@effect/sql`
   * statements and transactions inside it run in it, as inside `withTransaction`.
   */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** The writer connection, for the SQLite seams of this directory only. */
export class SqliteWriter extends Context.Tag("svc/SqliteWriter")<SqliteWriter, SqliteWriterShape>() {}

/** Longest a writer transaction may run before its fiber is interrupted and it is rolled back (`transactionTimeout` of `database.ts`). */
const defaultTransactionTimeBoxMs = 5_000

const sqlError = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

/** Where the database is, and how the client keeps it. */
export interface SqliteConnectionOptions {
  readonly filename: string
  readonly prepareCacheSize: number
  /** Whether an undeclared write fails (`write-declaration.ts`); by default `SVC_STRICT_WRITE_DECLARATIONS`. */
  readonly strictWrites?: boolean
  /** Longest a `transaction` may run before it is rolled back; 5 seconds by default (tests shorten it). */
  readonly transactionTimeBoxMs?: number
}

/** Opens the connection and builds the client over it (see the module comment). */
export const makeSqliteClient = (options: SqliteConnectionOptions) =>
  Effect.gen(function* () {
    const compiler = Statement.makeCompilerSqlite()
    const db = yield* Effect.acquireRelease(
      Effect.sync(() => new Database(options.filename)),
      (db) => Effect.sync(() => db.close())
    )
    db.pragma("journal_mode = WAL")
    const generations = options.strictWrites === undefined ? writeGenerations(db) : writeGenerations(db, { strict: options.strictWrites })

    const prepareCache = yield* Cache.make({
      capacity: options.prepareCacheSize,
      timeToLive: Duration.minutes(10),
      lookup: (text: string) =>
        Effect.try({ try: () => db.prepare(text), catch: (cause) => new SqlError({ cause, message: "Failed to prepare statement " }) })
    })
    const control = new Map<string, Database.Statement>()
    const prepareControl = (text: string) => {
      let statement = control.get(text)
      if (!statement) {
        statement = db.prepare(text)
        if (control.size < 64) control.set(text, statement)
      }
      return statement
    }

    const beginImmediate = db.prepare("BEGIN IMMEDIATE")
    const commit = db.prepare("COMMIT")
    const rollback = db.prepare("ROLLBACK")
    /**
     * Runs one statement on the writer with the write tracking: what it writes is noted before it
     * runs and counted once the writer is outside any transaction (at once for a statement that
     * commits by itself, at COMMIT for one inside a transaction).
     */
    const onWriter = <T>(statement: Database.Statement, text: string, declared: WriteDeclaration | undefined, use: () => T): T => {
      generations.noteStatement(text, statement.readonly, declared)
      try {
        return use()
      } finally {
        generations.settle()
      }
    }

    const runStatement = (text: string, statement: Database.Statement, params: ReadonlyArray<unknown>, raw: boolean) =>
      Effect.withFiberRuntime<unknown, SqlError>((fiber) => {
        if (Context.get(fiber.currentContext, SqlClient.SafeIntegers)) statement.safeIntegers(true)
        try {
          return Effect.succeed(
            onWriter(statement, text, fiber.getFiberRef(CurrentWrites), () => {
              if (statement.reader) return statement.all(...params)
              const result = statement.run(...params)
              return raw ? result : []
            })
          )
        } catch (cause) {
          return Effect.fail(sqlError(cause))
        }
      })
    const run = (text: string, params: ReadonlyArray<unknown>, raw = false) =>
      Effect.flatMap(prepareCache.get(text), (statement) => runStatement(text, statement, params, raw))

    const connection: Connection = {
      execute: (text, params, transformRows) =>
        (transformRows ? Effect.map(run(text, params), (rows) => transformRows(rows as ReadonlyArray<any>)) : run(text, params)) as Effect.Effect<
          ReadonlyArray<any>,
          SqlError
        >,
      executeRaw: (text, params) => run(text, params, true),
      executeValues: (text, params) =>
        Effect.acquireUseRelease(
          prepareCache.get(text),
          (statement) =>
            Effect.withFiberRuntime<Array<Array<unknown>>, SqlError>((fiber) => {
              try {
                return Effect.succeed(
                  onWriter(statement, text, fiber.getFiberRef(CurrentWrites), () => {
                    if (statement.reader) return statement.raw(true).all(...params) as Array<Array<unknown>>
                    statement.run(...params)
                    return []
                  })
                )
              } catch (cause) {
                return Effect.fail(sqlError(cause))
              }
            }),
          (statement) => Effect.sync(() => statement.reader && statement.raw(false))
        ),
      executeUnprepared: (text, params, transformRows) => {
        const effect = Effect.flatMap(
          Effect.try({ try: () => prepareControl(text), catch: sqlError }),
          (statement) => runStatement(text, statement, params ?? [], false)
        ) as Effect.Effect<ReadonlyArray<any>, SqlError>
        return transformRows ? Effect.map(effect, transformRows) : effect
      },
      /**
       * The statement's rows as a stream. They are read in one step under the statement's own run
       * (better-sqlite3 cannot run another statement on the connection while an iterator is open).
       */
      executeStream: (text, params, transformRows) =>
        Stream.flatMap(
          Stream.fromEffect(run(text, params) as Effect.Effect<ReadonlyArray<any>, SqlError>),
          (rows) => Stream.fromChunk(Chunk.unsafeFromArray([...(transformRows ? transformRows(rows) : rows)]))
        )
    }

    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(semaphore.take(1)),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))
        ),
        connection
      )
    )
    const client = yield* SqlClient.make({
      acquirer,
      compiler,
      transactionAcquirer,
      // Takes the write lock at BEGIN, waiting for another process's (the busy timeout): a deferred
      // BEGIN's first write after a read fails at once with SQLITE_BUSY (no wait) whenever another
      // process committed meanwhile, and the migrator reads that failure as "migrations already running".
      beginTransaction: "BEGIN IMMEDIATE",
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    const sqliteClient = Object.assign(client, {
      [SqliteClient.TypeId]: SqliteClient.TypeId,
      config: { filename: options.filename, prepareCacheSize: options.prepareCacheSize },
      export: Effect.flatMap(acquirer, () => Effect.try({ try: () => db.serialize() as Uint8Array, catch: sqlError })),
      backup: (destination: string) =>
        Effect.flatMap(acquirer, () => Effect.tryPromise({ try: () => db.backup(destination), catch: sqlError })),
      loadExtension: (path: string) =>
        Effect.flatMap(acquirer, () =>
          Effect.tap(Effect.try({ try: () => db.loadExtension(path), catch: sqlError }), () => prepareCache.invalidateAll)
        )
    }) as unknown as SqliteClient.SqliteClient

    /**
     * Whether no fiber holds the writer's lock. Effect's semaphore keeps its free permits in an
     * undeclared `free` field; without it (another version) the lock is always taken the long way.
     */
    const writerFree = (): boolean => (semaphore as unknown as { readonly free?: number }).free === 1
    const withConnection = <A>(use: (db: Database.Database) => A): Effect.Effect<A, SqlError> => {
      const useNow = (): A => {
        try {
          return use(db)
        } finally {
          generations.settle()
        }
      }
      const failure = (cause: unknown) => (cause instanceof SqlError ? cause : sqlError(cause))
      const runUse = Effect.try({ try: useNow, catch: failure })
      // `use` is synchronous: inside the fiber's own transaction, or while nobody holds the lock, it
      // runs in the very step that saw so (nothing can take the lock in between), which is as
      // exclusive as taking the lock, at none of the cost.
      return Effect.withFiberRuntime((fiber) => {
        const held = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
        if (Option.isNone(held) && !writerFree()) return semaphore.withPermits(1)(runUse)
        try {
          return Effect.succeed(useNow())
        } catch (cause) {
          return Effect.fail(failure(cause))
        }
      })
    }
    const idle = () => writerFree() && !db.inTransaction

    const timeBoxMs = options.transactionTimeBoxMs ?? defaultTransactionTimeBoxMs
    const savepoints: Array<{ readonly open: Database.Statement; readonly release: Database.Statement; readonly undo: Database.Statement }> = []
    const savepointAt = (depth: number) =>
      (savepoints[depth] ??= {
        open: db.prepare(`SAVEPOINT svc_${depth}`),
        release: db.prepare(`RELEASE svc_${depth}`),
        undo: db.prepare(`ROLLBACK TO svc_${depth}`)
      })
    /** Ends the open transaction: COMMIT on success, else ROLLBACK; dies if COMMIT fails. */
    const endTransaction = (committing: boolean): Effect.Effect<void> => {
      try {
        if (!committing) {
          if (db.inTransaction) rollback.run()
          return Effect.void
        }
        commit.run()
        return Effect.void
      } catch (cause) {
        if (db.inTransaction) rollback.run()
        return Effect.die(sqlError(cause))
      } finally {
        generations.settle()
      }
    }
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.withFiberRuntime<A, E, R>((fiber) => {
          const context = fiber.currentContext
          const held = Context.getOption(context, SqlClient.TransactionConnection)
          const depth = Option.isSome(held) ? held.value[1] + 1 : 0
          const inside = Effect.locally(restore(effect), FiberRef.currentContext, Context.add(context, SqlClient.TransactionConnection, [connection, depth]))
          if (depth > 0) {
            const savepoint = savepointAt(depth)
            try {
              savepoint.open.run()
            } catch (cause) {
              return Effect.die(sqlError(cause))
            }
            return Effect.flatMap(Effect.exit(inside), (exit) => {
              if (Exit.isFailure(exit)) savepoint.undo.run()
              savepoint.release.run()
              return exit
            })
          }
          // The lock taken in this very step when it is free (`take` would resume the fiber through
          // the scheduler), else waited for. The time box interrupts the fiber, which rolls it back.
          const whole = Effect.suspend(() => {
            try {
              beginImmediate.run()
            } catch (cause) {
              return Effect.die(sqlError(cause))
            }
            const timer = setTimeout(() => fiber.unsafeInterruptAsFork(fiber.id()), timeBoxMs)
            return Effect.flatMap(Effect.exit(inside), (exit) => {
              clearTimeout(timer)
              return Effect.zipRight(endTransaction(Exit.isSuccess(exit)), exit)
            })
          })
          return Effect.flatMap(semaphore.withPermitsIfAvailable(1)(whole), (now) => (Option.isSome(now) ? Effect.succeed(now.value) : semaphore.withPermits(1)(whole)))
        })
      )
    const writer: SqliteWriterShape = { db, withConnection, generations, onWriter, idle, transaction }
    return { client: sqliteClient, writer }
  })

/** The client's layer: `SqliteClient`, `SqlClient` and the `SqliteWriter` behind them. */
export const SqliteConnectionLive = (options: SqliteConnectionOptions) =>
  Layer.scopedContext(
    Effect.map(makeSqliteClient(options), ({ client, writer }) =>
      Context.make(SqliteClient.SqliteClient, client).pipe(Context.add(SqlClient.SqlClient, client), Context.add(SqliteWriter, writer))
    )
  ).pipe(Layer.provide(Reactivity.layer))
