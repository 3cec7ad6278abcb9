/**
 * What a write statement declares it writes, for the caches (`cache-versions.ts`): a repository's
 * write step names the tables its statement writes, instead of the tracker reading them out of the
 * SQL text (`write-tracking.ts`). Two forms, one per way of writing:
 *
 * - a transaction body step (`txRun`, `txAll` in `write-fast-path.ts`) passes the declaration as
 *   the statement's last argument: `yield* txRun("UPDATE pages SET …", [...], pageWrites)`;
 * - an `@effect/sql` statement is wrapped: `sql\`INSERT INTO settings …\`.pipe(writing(settingWrites))`,
 *   which sets `CurrentWrites` for the statements it runs.
 *
 * A declaration names tables (`pages`) or a column group of one (`organizations#credits`: the
 * columns no cache reads, see `columnGroups`). The tables a declared table's triggers and cascading
 * foreign keys write are added by the tracker from the schema. `writesEveryTable` is the
 * declaration of what cannot name its tables: migrations, DDL, a test's hand-written fixture rows.
 */
import { Effect, FiberRef } from "effect"

/** The tables (or `table#group`s) one write statement writes, lower case. */
export interface WriteDeclaration {
  readonly _tag: "WriteDeclaration"
  /** Table names, or `table#group` for a column group; `*` for every table. */
  readonly tables: ReadonlyArray<string>
}

/** Columns written apart from the rest of their table: no cache reads them (an organization's credits). */
export const columnGroups: ReadonlyArray<{ readonly table: string; readonly group: string; readonly columns: ReadonlySet<string> }> = [
  { table: "organizations", group: "credits", columns: new Set(["credits_remaining", "credits_used", "credits_renew_at"]) }
]

const tableName = /^[a-z_][a-z0-9_]*$/

/**
 * The declaration of a statement writing `tables` (names as in the schema, or `table#group` for a
 * column group listed in `columnGroups`). Throws on a name that cannot be a table or an unknown
 * group, so a typo fails where the repository module is first loaded.
 */
export const declareWrites = (...tables: ReadonlyArray<string>): WriteDeclaration => {
  if (tables.length === 0) throw new TypeError("a write declares at least one table")
  for (const table of tables) {
    const [name, group, ...rest] = table.split("#")
    if (rest.length > 0 || !tableName.test(name!)) throw new TypeError(`not a table name: ${table}`)
    if (group !== undefined && !columnGroups.some((known) => known.table === name && known.group === group)) {
      throw new TypeError(`not a known column group: ${table}`)
    }
  }
  return { _tag: "WriteDeclaration", tables: [...new Set(tables)] }
}

/** Every table: migrations, DDL and writes whose tables cannot be named (test fixtures). */
export const writesEveryTable: WriteDeclaration = { _tag: "WriteDeclaration", tables: ["*"] }

/**
 * Whether a write statement without a declaration fails instead of counting as a write of every
 * table: `SVC_STRICT_WRITE_DECLARATIONS=1`, read once when this module is loaded. The test suite's
 * SQLite runs set it (`vitest.config.ts`), so a new undeclared write fails the tests that reach it.
 */
export const strictWriteDeclarations: boolean = process.env.SVC_STRICT_WRITE_DECLARATIONS === "1"

/** A write statement ran on the writer without declaring its tables, in strict mode. */
export class UndeclaredWrite extends Error {
  constructor(readonly text: string) {
    super(`A write statement declares no tables (write-declaration.ts): ${text.replace(/\s+/g, " ").slice(0, 200)}`)
    this.name = "UndeclaredWrite"
  }
}

/** The declaration the `@effect/sql` statements of the current fiber run under; unset outside `writing`. */
export const CurrentWrites: FiberRef.FiberRef<WriteDeclaration | undefined> = FiberRef.unsafeMake<WriteDeclaration | undefined>(undefined)

/**
 * Runs `self` (an `@effect/sql` statement, or an effect of several that write the same tables)
 * with its writes declared: `sql\`UPDATE pages SET …\`.pipe(writing(pageWrites))`.
 */
export const writing =
  (declaration: WriteDeclaration) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(self, CurrentWrites, declaration)
