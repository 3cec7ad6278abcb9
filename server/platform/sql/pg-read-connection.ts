/**
 * The read fast path on PostgreSQL: the same `?`-parameterized query texts as on SQLite, rewritten
 * once per text to `$n` placeholders and run as named prepared statements on the shared pool
 * (each pooled connection prepares a text once). Statement names are given once per process, one
 * per text: every reader on a pool (each service layer builds its own) must agree on what a name
 * means, since PostgreSQL refuses a name prepared on a connection for another text.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type pg from "pg"

/** `text` with each `?` outside quotes and comments numbered `$1`, `$2`, … */
export const numberPlaceholders = (text: string): string => {
  let out = ""
  let n = 0
  let quote: string | null = null
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quote !== null) {
      if (c === quote) quote = null
      out += c
    } else if (c === "'" || c === '"') {
      quote = c
      out += c
    } else if (c === "?") {
      out += `$${++n}`
    } else {
      out += c
    }
  }
  return out
}

const prepared = new Map<string, { readonly name: string; readonly text: string }>()

/** The process-wide name and numbered text of a read query. */
const statementOf = (text: string) => {
  let statement = prepared.get(text)
  if (statement === undefined) {
    statement = { name: `svc_read_${prepared.size + 1}`, text: numberPlaceholders(text) }
    prepared.set(text, statement)
  }
  return statement
}

/** Reads on `pool` with `?` parameters: row objects or rows of column values. */
export const pgReads = (pool: pg.Pool) => {
  const run = (text: string, params: ReadonlyArray<unknown>, rowMode: "array" | undefined) =>
    Effect.tryPromise({
      try: () => {
        const { name, text: numbered } = statementOf(text)
        return pool.query({ name, text: numbered, values: params, ...(rowMode === undefined ? {} : { rowMode }) })
      },
      catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
    }).pipe(Effect.map((result) => result.rows))
  return {
    all: <Row>(text: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>, SqlError> => run(text, params, undefined),
    values: <Row extends ReadonlyArray<unknown>>(text: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
      run(text, params, "array")
  }
}
