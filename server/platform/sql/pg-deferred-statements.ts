/**
 * Fewer round trips on PostgreSQL (issue 24): `BEGIN` and `SAVEPOINT` carry nothing back, so a
 * pooled connection does not send them on their own. Each is answered at once and held; the next
 * statement on that connection takes them along:
 *
 * - a statement without parameters (the write transaction's isolation and lock, another savepoint)
 *   is sent in the same simple query, `BEGIN; SET TRANSACTION …; SELECT pg_advisory_xact_lock_shared(…)`,
 *   and answered with its own results only;
 * - a statement with parameters cannot share a simple query, so the held statements go first as
 *   one query of their own (two savepoints in a row still cost one round trip), then it;
 * - `ROLLBACK TO SAVEPOINT x` while `x` is still held drops `x` and what was held after it (nothing
 *   ran since, so there is nothing to undo); `COMMIT` or `ROLLBACK` while `BEGIN` is still held
 *   drops the whole transaction (it never reached the server); held savepoints before a `COMMIT` or
 *   `ROLLBACK` are dropped.
 *
 * Every held statement reaches the server before any statement that follows it, in order, so what
 * the server runs is what it ran before, in fewer round trips: the transaction's snapshot is
 * taken by its first statement either way. A held statement that fails (none does outside an
 * aborted transaction) fails the statement it was sent with.
 *
 * Installed on each pooled connection before the data-version watcher (`pg-data-version.ts`), which
 * therefore still sees every statement as the service sent it.
 */
import type pg from "pg"

/** Statements held until the next one: a `BEGIN`, or a savepoint (its name kept to match its rollback). */
const beginText = /^\s*BEGIN\s*$/i
const savepointText = /^\s*SAVEPOINT\s+([A-Za-z_][A-Za-z0-9_]*)\s*$/i
const rollbackToText = /^\s*ROLLBACK\s+TO\s+(?:SAVEPOINT\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*$/i
const commitText = /^\s*(COMMIT|END)\b/i
const rollbackText = /^\s*(ROLLBACK|ABORT)\s*$/i

/** A statement held back: its text, and the savepoint it sets (null for `BEGIN`). */
interface Held {
  readonly text: string
  readonly savepoint: string | null
}

type Callback = (error: unknown, result?: unknown) => void

/** What `client.query` was called with, as far as holding statements is concerned. */
interface Call {
  /** The text when it is a plain statement without parameters (a simple query), else undefined. */
  readonly simpleText: string | undefined
  /** The callback, when the caller gave one (else the caller awaits the returned promise). */
  readonly callback: Callback | undefined
}

const callOf = (args: ReadonlyArray<unknown>): Call => {
  const [first, second] = args
  const last = args[args.length - 1]
  const callback = typeof last === "function" ? (last as Callback) : undefined
  if (typeof first === "string") {
    const values = Array.isArray(second) ? second : undefined
    return { simpleText: values === undefined || values.length === 0 ? first : undefined, callback }
  }
  if (first !== null && typeof first === "object" && typeof (first as { submit?: unknown }).submit !== "function") {
    const config = first as { text?: unknown; values?: unknown; name?: unknown; rowMode?: unknown; queryMode?: unknown }
    const plain =
      typeof config.text === "string" &&
      config.name === undefined &&
      config.rowMode === undefined &&
      config.queryMode === undefined &&
      (config.values === undefined || (Array.isArray(config.values) && config.values.length === 0)) &&
      !(Array.isArray(second) && second.length > 0)
    return { simpleText: plain ? (config.text as string) : undefined, callback }
  }
  return { simpleText: undefined, callback }
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
 * The results of `text` sent after `held` statements in one simple query: `held.length` results
 * come first and are dropped; one result left is answered alone, as `text` sent alone would be.
 */
const ownResults = (result: unknown, held: number): unknown => {
  if (!Array.isArray(result)) return result
  const own = result.slice(held)
  return own.length === 1 ? own[0] : own
}

/** Holds `BEGIN` and savepoints on `client` until its next statement (see the module comment). */
export const deferTransactionControl = (client: pg.PoolClient): void => {
  const query = client.query.bind(client) as (...args: Array<unknown>) => unknown
  let held: Array<Held> = []

  /** Sends `text` (no parameters) with the held statements in front, answering only its own results. */
  const sendWithHeld = (text: string, call: Call): unknown => {
    const before = held
    held = []
    const combined = `${before.map((statement) => statement.text).join("; ")}; ${text}`
    if (call.callback !== undefined) {
      const callback = call.callback
      return query(combined, (error: unknown, result: unknown) => (error ? callback(error) : callback(null, ownResults(result, before.length))))
    }
    return (query(combined) as Promise<unknown>).then((result) => ownResults(result, before.length))
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
    const text = call.simpleText
    if (text !== undefined && beginText.test(text) && held.length === 0) {
      held.push({ text: "BEGIN", savepoint: null })
      return answer(call, emptyResult(text))
    }
    const savepoint = text === undefined ? null : savepointText.exec(text)
    if (savepoint !== null && text !== undefined) {
      held.push({ text: text.trim(), savepoint: savepoint[1]! })
      return answer(call, emptyResult(text))
    }
    if (held.length === 0) return query(...args)
    if (text !== undefined) {
      const rollbackTo = rollbackToText.exec(text)
      if (rollbackTo !== null) {
        const index = held.map((statement) => statement.savepoint).lastIndexOf(rollbackTo[1]!)
        if (index >= 0) {
          // Nothing ran since that savepoint: nothing to undo, and it need not be set at all.
          held = held.slice(0, index)
          return answer(call, emptyResult(text))
        }
        if (held[0]!.savepoint !== null) {
          // Everything held comes after the savepoint rolled back to, which was sent: undone with it.
          held = []
          return query(...args)
        }
      }
      const ends = commitText.test(text) || rollbackText.test(text)
      if (ends && held[0]!.savepoint === null) {
        if (/^\s*(COMMIT|END|ROLLBACK|ABORT)\s*$/i.test(text)) {
          // The transaction never reached the server: nothing to commit or roll back.
          held = []
          return answer(call, emptyResult(text))
        }
      } else if (ends) {
        // Savepoints with nothing after them: the end of the transaction makes them moot.
        held = []
        return query(...args)
      }
      return sendWithHeld(text, call)
    }
    return sendHeldThen(call, args)
  }
}
