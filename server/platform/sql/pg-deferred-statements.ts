/**
 * Fewer round trips on PostgreSQL (issue 24). Statements whose answer nobody reads are not sent on
 * their own: `BEGIN`, `SAVEPOINT`, and inside a transaction the writes of a transaction body run
 * for their effect alone (`txRun`, marked with {@link laterMarker} by `statementsOn`). Each is
 * answered at once and held; the next statement on that connection takes them along, in the same
 * simple query (`BEGIN; SET TRANSACTION …; SELECT pg_advisory_xact_lock_shared(…)`, or a PATCH's
 * five writes with its `COMMIT`), and is answered with its own results only.
 *
 * - A simple query cannot carry parameters, so a statement sent with held ones has its parameters
 *   written into its text as quoted literals (`pg.escapeLiteral` of the text node-postgres would
 *   have sent: the server infers their types from where they stand, as it does for parameters sent
 *   untyped). Only plain values are written so (text, numbers, booleans, null) and only into texts
 *   this module can scan (no backslash, no dollar quoting); any other statement is sent as it came,
 *   after the held ones in a query of their own (no worse than before).
 * - `ROLLBACK TO SAVEPOINT x` while `x` is held drops `x` and what was held after it (nothing of it
 *   reached the server); `COMMIT` or `ROLLBACK` while only `BEGIN` and savepoints are held drops
 *   the whole transaction; `ROLLBACK` drops held writes.
 * - Outside a transaction nothing is held: a write there must be done when its call returns.
 *
 * Every held statement reaches the server before any statement after it, in order, within the
 * same transaction: the server runs what it ran before, in fewer round trips. A held write that
 * fails fails the statement it was sent with (same error, same code): a body cannot catch its
 * statements' failures anyway (they die, `statementsOn`), and a lost race is still seen as one.
 *
 * Installed on each pooled connection before the data-version watcher (`pg-data-version.ts`), which
 * therefore still sees every statement as the service sent it.
 */
import pg from "pg"
import { laterMarker } from "./statement-text.js"

const beginText = /^\s*BEGIN\s*$/i
const savepointText = /^\s*SAVEPOINT\s+([A-Za-z_][A-Za-z0-9_]*)\s*$/i
const rollbackToText = /^\s*ROLLBACK\s+TO\s+(?:SAVEPOINT\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*$/i
/** The end of a transaction: COMMIT or ROLLBACK (not to a savepoint), possibly followed by more statements. */
const endText = /^\s*(COMMIT|END|ROLLBACK|ABORT)\b(?!\s+TO\b)/i
const rollbackText = /^\s*(ROLLBACK|ABORT)\b(?!\s+TO\b)/i

/**
 * A statement held back: a `BEGIN`, a savepoint (its name kept to match its rollback), or a write
 * (one or more statements: how many answers the server sends for it).
 */
interface Held {
  readonly kind: "begin" | "savepoint" | "write"
  readonly text: string
  readonly savepoint?: string | undefined
  readonly statements: number
}

/** How many statements `text` holds: its semicolons outside quotes, plus one. */
const statementsIn = (text: string): number => {
  let count = 1
  let quote: string | null = null
  for (const c of text) {
    if (quote !== null) {
      if (c === quote) quote = null
    } else if (c === "'" || c === '"') quote = c
    else if (c === ";") count++
  }
  return count
}

type Callback = (error: unknown, result?: unknown) => void

/** What `client.query` was called with. */
interface Call {
  /** The SQL text, when the call is a plain statement (not a named or array-mode query, not a cursor). */
  readonly text: string | undefined
  readonly values: ReadonlyArray<unknown>
  /** The callback, when the caller gave one (else the caller awaits the returned promise). */
  readonly callback: Callback | undefined
}

const callOf = (args: ReadonlyArray<unknown>): Call => {
  const [first, second] = args
  const last = args[args.length - 1]
  const callback = typeof last === "function" ? (last as Callback) : undefined
  const values = Array.isArray(second) ? (second as ReadonlyArray<unknown>) : []
  if (typeof first === "string") return { text: first, values, callback }
  if (first !== null && typeof first === "object" && typeof (first as { submit?: unknown }).submit !== "function") {
    const config = first as { text?: unknown; values?: unknown; name?: unknown; rowMode?: unknown; queryMode?: unknown }
    const plain = typeof config.text === "string" && config.name === undefined && config.rowMode === undefined && config.queryMode === undefined
    if (plain) return { text: config.text as string, values: Array.isArray(config.values) ? config.values : values, callback }
  }
  return { text: undefined, values, callback }
}

/** A value as the quoted literal of the text node-postgres would send for it, or undefined when it is not a plain value. */
const literalOf = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return "NULL"
  if (typeof value === "string") return value.includes("\0") ? undefined : pg.escapeLiteral(value)
  if (typeof value === "number") return Number.isFinite(value) ? pg.escapeLiteral(String(value)) : undefined
  if (typeof value === "boolean" || typeof value === "bigint") return pg.escapeLiteral(String(value))
  return undefined
}

/**
 * `text` with each `$n` outside quotes and comments replaced by the literal of `values[n-1]`, or
 * undefined when that cannot be done safely (a value that is not plain, a text with backslashes or
 * dollar quoting, a parameter without a value).
 */
export const inlineParameters = (text: string, values: ReadonlyArray<unknown>): string | undefined => {
  if (values.length === 0) return text
  if (text.includes("\\") || /\$(?:\$|[A-Za-z_])/.test(text)) return undefined
  const literals = values.map(literalOf)
  if (literals.some((literal) => literal === undefined)) return undefined
  let out = ""
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1)
      if (end < 0) return undefined
      out += text.slice(i, end + 1)
      i = end + 1
    } else if (c === "-" && text[i + 1] === "-") {
      const end = text.indexOf("\n", i)
      out += end < 0 ? text.slice(i) : text.slice(i, end)
      i = end < 0 ? text.length : end
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2)
      if (end < 0) return undefined
      out += text.slice(i, end + 2)
      i = end + 2
    } else if (c === "$" && /[0-9]/.test(text[i + 1] ?? "")) {
      let j = i + 1
      while (j < text.length && /[0-9]/.test(text[j]!)) j++
      const literal = literals[Number(text.slice(i + 1, j)) - 1]
      if (literal === undefined) return undefined
      out += literal
      i = j
    } else {
      out += c
      i++
    }
  }
  return out
}

/** The answer of a statement that was held (or dropped): no rows. */
const emptyResult = (text: string) => ({ command: text.trim().split(/\s+/)[0]!.toUpperCase(), rowCount: null, rows: [], fields: [] })

/** Answers a call without sending anything. */
const answer = (call: Call, result: unknown): unknown => {
  if (call.callback !== undefined) {
    const callback = call.callback
    process.nextTick(() => callback(null, result))
    return undefined
  }
  return Promise.resolve(result)
}

/**
 * The results of a statement sent after `held` statements in one simple query: `held` results come
 * first and are dropped; one result left is answered alone, as the statement sent alone would be.
 */
const ownResults = (result: unknown, held: number): unknown => {
  if (!Array.isArray(result)) return result
  const own = result.slice(held)
  return own.length === 1 ? own[0] : own
}

/** Holds statements whose answer nobody reads on `client` until its next statement (see the module comment). */
export const deferTransactionControl = (client: pg.PoolClient): void => {
  const query = client.query.bind(client) as (...args: Array<unknown>) => unknown
  let held: Array<Held> = []
  /** Whether a transaction is open on this connection (its BEGIN held or sent). */
  let inTransaction = false

  /**
   * Sends `text` (its parameters already written in) with the held statements in front, answering
   * only its own results. When `text` ends the transaction and a held statement fails, the server
   * skips the rest (the COMMIT too) and leaves the transaction open and failed: it is rolled back
   * before the failure is answered, as a COMMIT that fails would have left it.
   */
  const sendWithHeld = (text: string, call: Call, ending: boolean): unknown => {
    const before = held
    held = []
    const combined = `${before.map((statement) => statement.text).join("; ")}; ${text}`
    const answers = before.reduce((sum, statement) => sum + statement.statements, 0)
    const settle = (error: unknown, result: unknown, done: (error: unknown, result?: unknown) => void) => {
      if (!error) return done(null, ownResults(result, answers))
      if (!ending) return done(error)
      query("ROLLBACK", () => done(error))
    }
    if (call.callback !== undefined) {
      const callback = call.callback
      query(combined, (error: unknown, result: unknown) => settle(error, result, callback))
      return undefined
    }
    return new Promise((resolve, reject) =>
      query(combined, (error: unknown, result: unknown) => settle(error, result, (failure, value) => (failure ? reject(failure) : resolve(value))))
    )
  }

  /** Sends the held statements as one query, then the call as it came. */
  const sendHeldThen = (call: Call, args: Array<unknown>): unknown => {
    const text = held.map((statement) => statement.text).join("; ")
    held = []
    if (call.callback !== undefined) {
      const callback = call.callback
      query(text, (error: unknown) => (error ? callback(error) : query(...args)))
      return undefined
    }
    const first = args[0]
    if (first !== null && typeof first === "object" && typeof (first as { submit?: unknown }).submit === "function") {
      // A submittable (a cursor) answers through itself: sent once the held statements are done.
      query(text, () => query(...args))
      return first
    }
    return (query(text) as Promise<unknown>).then(() => query(...args))
  }

  ;(client as { query: unknown }).query = (...args: Array<unknown>) => {
    const call = callOf(args)
    let text = call.text
    if (text !== undefined && text.startsWith(laterMarker)) {
      text = text.slice(laterMarker.length)
      if (typeof args[0] === "string") args[0] = text
      else args[0] = { ...(args[0] as object), text }
      const inlined = inTransaction ? inlineParameters(text, call.values) : undefined
      if (inlined !== undefined) {
        held.push({ kind: "write", text: inlined, statements: statementsIn(inlined) })
        return answer(call, emptyResult(text))
      }
    }
    const simple = text !== undefined && call.values.length === 0 ? text : undefined
    if (simple !== undefined && beginText.test(simple) && held.length === 0) {
      inTransaction = true
      held.push({ kind: "begin", text: "BEGIN", statements: 1 })
      return answer(call, emptyResult(simple))
    }
    const savepoint = simple === undefined ? null : savepointText.exec(simple)
    if (savepoint !== null && simple !== undefined) {
      held.push({ kind: "savepoint", text: simple.trim(), savepoint: savepoint[1]!, statements: 1 })
      return answer(call, emptyResult(simple))
    }
    const ends = simple !== undefined && endText.test(simple)
    if (ends) inTransaction = false
    if (held.length === 0) return query(...args)
    if (simple !== undefined) {
      const rollbackTo = rollbackToText.exec(simple)
      if (rollbackTo !== null) {
        const index = held.map((statement) => statement.savepoint).lastIndexOf(rollbackTo[1]!)
        if (index >= 0) {
          // Nothing of what was held since that savepoint reached the server: nothing to undo there.
          held = held.slice(0, index)
          return answer(call, emptyResult(simple))
        }
        if (held.every((statement) => statement.kind !== "begin")) {
          // Everything held comes after the savepoint rolled back to, which was sent: undone with it.
          held = []
          return query(...args)
        }
      }
      if (ends && rollbackText.test(simple)) {
        // Nothing held reaches the server: a held BEGIN means the transaction never did (nothing
        // to roll back), else what was held came after what the rollback undoes anyway.
        const neverStarted = held[0]!.kind === "begin"
        held = []
        return neverStarted ? answer(call, emptyResult(simple)) : query(...args)
      }
      if (ends && held.every((statement) => statement.kind !== "write")) {
        if (held[0]!.kind !== "begin") {
          // Savepoints with nothing after them: the end of the transaction makes them moot.
          held = []
          return query(...args)
        }
        if (/^\s*(COMMIT|END)\s*$/i.test(simple)) {
          // The transaction never reached the server: nothing to commit.
          held = []
          return answer(call, emptyResult(simple))
        }
      }
      return sendWithHeld(simple, call, ends)
    }
    const inlined = text === undefined ? undefined : inlineParameters(text, call.values)
    return inlined !== undefined ? sendWithHeld(inlined, call, false) : sendHeldThen(call, args)
  }
}
