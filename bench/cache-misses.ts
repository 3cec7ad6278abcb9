/**
 * Makes every `data_version` cache of the svc server miss, for the cache-miss figures of the
 * benchmarks. The server keeps credentials, Knowledgebase listing pages and page trees while
 * `PRAGMA data_version` stays the same (on its read connection, read-connection.ts, or on its writer
 * with the tables its own commits wrote, server/platform/sql/cache-versions.ts);
 * while misses are on, every reading of it in this process answers a value it never gave before,
 * exactly as if another connection had committed just before each check. SQLite's own page cache
 * stays warm, so a miss pays the queries and the work on their rows, not disk reads.
 *
 * Nothing is patched until misses are first switched on, and switching them off restores
 * better-sqlite3's own `Statement.get`, so runs with the caches kept measure the server untouched.
 */
import Database from "better-sqlite3"
import { createInterface } from "node:readline"

const dataVersionSql = "PRAGMA data_version"

type Get = (this: Database.Statement, ...params: Array<unknown>) => unknown

const statementPrototype = (): { get: Get } => {
  const db = new Database(":memory:")
  try {
    return Object.getPrototypeOf(db.prepare("SELECT 1")) as { get: Get }
  } finally {
    db.close()
  }
}

/** Switches the misses on or off (off at first). */
export interface CacheMisses {
  readonly set: (missing: boolean) => void
  readonly missing: () => boolean
}

/** The switch for this process's better-sqlite3 statements. */
export const cacheMisses = (): CacheMisses => {
  const prototype = statementPrototype()
  const originalGet = prototype.get
  let fakeVersion = -1
  const missingGet: Get = function (this: Database.Statement, ...params) {
    if (this.source === dataVersionSql) return --fakeVersion
    return originalGet.apply(this, params)
  }
  return {
    set: (missing) => {
      prototype.get = missing ? missingGet : originalGet
    },
    missing: () => prototype.get === missingGet
  }
}

/**
 * Makes a launcher answer the lines `caches missing` and `caches kept` on its stdin: switches the
 * misses (see {@link cacheMisses}) and says `{"caches":"…"}` on its stdout once in effect
 * (bench/children.ts `setSvcCaches` waits for it).
 */
export const answerCacheCommands = (): void => {
  const caches = cacheMisses()
  createInterface({ input: process.stdin }).on("line", (line) => {
    const command = /^caches (missing|kept)$/.exec(line.trim())
    if (!command) return
    caches.set(command[1] === "missing")
    process.stdout.write(`${JSON.stringify({ caches: command[1] })}\n`)
  })
}
