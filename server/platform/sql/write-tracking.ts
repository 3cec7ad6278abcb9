/**
 * Which tables this process's own commits changed. Each write statement run on the writer
 * connection declares the tables it writes (`write-declaration.ts`: `CurrentWrites` for
 * `@effect/sql` statements, a field of a transaction body step); whether a statement writes at all
 * is SQLite's own answer (the prepared statement's `readonly`). The declared tables are widened by
 * the schema, read once (and again after DDL), to the tables their cascading foreign keys and their
 * triggers may write too. The tables are noted while a transaction is open and their generations
 * are bumped in the same synchronous step as the COMMIT, so a cache tagged before its query never
 * serves what an earlier commit changed.
 *
 * No statement's text is read for tables. Two statement kinds are told by their first word, since
 * SQLite's `readonly` does not separate them from writes: transaction control (nothing written)
 * and DDL or PRAGMA (every table). A write that declares nothing counts as a write of every table,
 * so no cache is ever left stale; in strict mode (`strictWriteDeclarations`) it fails instead.
 *
 * A column group (`organizations#credits`, `columnGroups`) is a table's columns that no cache
 * reads: a statement declared to write only the group leaves caches of the table valid (an
 * organization's credits, charged by every run and search, leave its cached credentials). On a
 * table with triggers a group's write counts as the whole table's.
 */
import type Database from "better-sqlite3"
import { strictWriteDeclarations, UndeclaredWrite, type WriteDeclaration } from "./write-declaration.js"

/** A table name, lower case. */
type Table = string

const everyTable = "*"
/** What an undeclared write, DDL or a migration writes. */
const allTables: ReadonlySet<Table> = new Set([everyTable])

const writeTarget = /\b(?:insert\s+(?:or\s+\w+\s+)?into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+(?:["`[]?\w+["`\]]?\s*\.\s*)?["`[]?(\w+)/gi
const readOnlyStart = /^\s*(?:select|with|pragma\s+(?:data_version|foreign_key_list|table_info|index_list)|explain)\b/i
const transactionControl = /^\s*(?:begin|commit|end|rollback|savepoint|release)\b/i
const ddl = /^\s*(?:create|drop|alter|vacuum|reindex|analyze|attach|detach|pragma)\b/i

/**
 * The tables a trigger's body writes (SQL of the schema, read once when the schema is, never a
 * statement's), before widening; `*` when it cannot tell.
 */
export const tablesWrittenBy = (text: string): ReadonlySet<Table> => {
  if (transactionControl.test(text)) return new Set()
  const targets = new Set<Table>()
  for (const match of text.matchAll(writeTarget)) {
    const table = match[1]!.toLowerCase()
    // `ON CONFLICT … DO UPDATE SET`: an upsert of its own target, already counted.
    if (table !== "set") targets.add(table)
  }
  if (targets.size > 0) return targets
  if (readOnlyStart.test(text)) return new Set()
  return new Set([everyTable])
}

/** Per-table generations of this process's commits on one writer connection. */
export interface WriteGenerations {
  /**
   * Notes the tables a statement writes; call before running it on the writer, with its prepared
   * statement's `readonly` (SQLite's own `sqlite3_stmt_readonly`) and the declaration it runs under.
   * Reads and transaction control note nothing; a write declaring nothing (migrations, DDL) notes
   * every table.
   */
  readonly noteStatement: (text: string, readonly: boolean, declared: WriteDeclaration | undefined) => void
  /** Bumps what was noted once the writer is outside any transaction; call after every statement. */
  readonly settle: () => void
  /** The sum of the generations of `tables`: changes whenever a commit of this process wrote one. */
  readonly generationOf: (tables: ReadonlyArray<string>) => number
}

/**
 * Tracks the writes made on `db`, which must be the connection every write of the process uses.
 * `strict`: an undeclared write statement throws `UndeclaredWrite` before it runs.
 */
export const writeGenerations = (db: Database.Database, options: { readonly strict: boolean } = { strict: strictWriteDeclarations }): WriteGenerations => {
  const generations = new Map<Table, number>()
  let everything = 0
  const pending = new Set<Table>()
  const byDeclaration = new Map<WriteDeclaration, ReadonlySet<Table>>()
  let widening: Map<Table, ReadonlySet<Table>> | null = null

  const withTriggers = new Set<Table>()
  const widen = (): Map<Table, ReadonlySet<Table>> => {
    const direct = new Map<Table, Set<Table>>()
    const add = (from: Table, to: Table) => {
      let set = direct.get(from)
      if (!set) direct.set(from, (set = new Set()))
      set.add(to)
    }
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as Array<string>
    for (const table of tables) {
      const keys = db.prepare(`SELECT "table" AS parent, on_update, on_delete FROM pragma_foreign_key_list(?)`).all(table) as Array<{
        parent: string
        on_update: string
        on_delete: string
      }>
      for (const key of keys) {
        if (key.on_update !== "NO ACTION" || key.on_delete !== "NO ACTION") add(key.parent.toLowerCase(), table.toLowerCase())
      }
    }
    const triggers = db.prepare("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'").all() as Array<{ tbl_name: string; sql: string }>
    for (const trigger of triggers) {
      withTriggers.add(trigger.tbl_name.toLowerCase())
      const body = trigger.sql.replace(/^[\s\S]*?\bbegin\b/i, "")
      for (const table of tablesWrittenBy(body)) add(trigger.tbl_name.toLowerCase(), table)
    }
    const closure = new Map<Table, ReadonlySet<Table>>()
    for (const start of direct.keys()) {
      const reached = new Set<Table>()
      const queue = [start]
      while (queue.length > 0) {
        for (const next of direct.get(queue.pop()!) ?? []) {
          if (!reached.has(next)) {
            reached.add(next)
            queue.push(next)
          }
        }
      }
      closure.set(start, reached)
    }
    return closure
  }

  /** `written` widened by the schema: what its tables' triggers and cascading foreign keys write too. */
  const widened = (written: ReadonlySet<Table>): ReadonlySet<Table> => {
    if (written.has(everyTable)) {
      widening = null
      byDeclaration.clear()
      return written
    }
    if (written.size === 0) return written
    widening ??= widen()
    let tables = written
    for (const table of written) {
      const hash = table.indexOf("#")
      // A trigger on the table may read or write any column: a group's write is the table's.
      if (hash >= 0 && withTriggers.has(table.slice(0, hash))) tables = new Set([...tables].map((t) => (t === table ? table.slice(0, hash) : t)))
    }
    const wide = new Set(tables)
    for (const table of tables) for (const reached of widening.get(table) ?? []) wide.add(reached)
    return wide
  }

  const tablesOfDeclaration = (declared: WriteDeclaration): ReadonlySet<Table> => {
    let tables = byDeclaration.get(declared)
    if (tables) return tables
    tables = widened(new Set(declared.tables))
    if (tables.has(everyTable)) return tables
    byDeclaration.set(declared, tables)
    return tables
  }

  return {
    noteStatement: (text, readonly, declared) => {
      if (readonly || transactionControl.test(text)) return
      if (declared === undefined && options.strict && !ddl.test(text)) throw new UndeclaredWrite(text)
      const tables = declared !== undefined ? tablesOfDeclaration(declared) : widened(allTables)
      for (const table of tables) pending.add(table)
    },
    settle: () => {
      if (db.inTransaction || pending.size === 0) return
      for (const table of pending) {
        if (table === everyTable) everything++
        else generations.set(table, (generations.get(table) ?? 0) + 1)
      }
      pending.clear()
    },
    generationOf: (tables) => {
      let sum = everything
      for (const table of tables) sum += generations.get(table) ?? 0
      return sum
    },
  }
}
