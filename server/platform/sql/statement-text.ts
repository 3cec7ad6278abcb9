/**
 * Building `?`-parameterized statement texts (the one form of the write fast path and the read
 * connection): placeholder lists, and texts built once per shape so the same string keys the
 * prepared-statement and write-tracking caches on every call.
 */

/** `?, ?, …`: one placeholder per value. */
export const placeholders = (count: number): string => Array.from({ length: count }, () => "?").join(", ")

/** `(?, ?), (?, ?), …`: `rows` tuples of `columns` placeholders. */
export const tuples = (rows: number, columns: number): string => {
  const tuple = `(${placeholders(columns)})`
  return Array.from({ length: rows }, () => tuple).join(", ")
}

/**
 * SQL text built once per shape (a count of ids or rows): the same string each time, so neither
 * building it nor hashing it for the prepared-statement and write-tracking caches costs per call.
 */
export const textPerCount = (build: (count: number) => string): ((count: number) => string) => {
  const texts = new Map<number, string>()
  return (count) => {
    let text = texts.get(count)
    if (text === undefined) {
      text = build(count)
      texts.set(count, text)
    }
    return text
  }
}

/**
 * Prefix of a statement whose answer nobody reads (a transaction body's `txRun` on PostgreSQL):
 * inside a transaction the connection may hold it and send it with the next statement
 * (`pg-deferred-statements.ts`, which strips it before anything is sent).
 */
export const laterMarker = "/*svc:later*/ "

/**
 * Prefix of a write, outside any transaction, to a table no cache reads (an instance's heartbeat):
 * on PostgreSQL it moves no data version (`pg-data-version.ts`, `unversionedTables`), so the instances' caches stay
 * while they only beat. SQLite reads it as the comment it is.
 */
export const unversionedMarker = "/*svc:unversioned*/ "
