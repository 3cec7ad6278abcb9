/**
 * Cache versions on a real database: this process's commits change the version of a cache only
 * when they wrote one of its tables (directly, through a trigger or a cascading foreign key), in
 * or out of a transaction, through `@effect/sql` or the fast path; any commit of another connection
 * changes every version. None is made while a transaction of this process is open: every SQLite
 * transaction begins IMMEDIATE, holding the write lock until it ends.
 */
import { SqlClient } from "@effect/sql"
import Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { CacheVersions } from "../../server/platform/sql/cache-versions.js"
import { databaseFile, DatabaseLive } from "../../server/platform/sql/database.js"
import { txRun, WriteTransactions } from "../../server/platform/sql/write-fast-path.js"
import { ReadConnection } from "../../server/platform/sql/read-connection.js"
import { declareWrites, writing } from "../../server/platform/sql/write-declaration.js"
import { tablesWrittenBy } from "../../server/platform/sql/write-tracking.js"

let dataDir: string
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "svc-cache-versions-"))
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const run = <A>(body: Effect.Effect<A, unknown, CacheVersions | WriteTransactions | SqlClient.SqlClient>) =>
  Effect.runPromise(
    body.pipe(
      Effect.provide(Layer.merge(CacheVersions.Default, WriteTransactions.Default).pipe(Layer.provideMerge(DatabaseLive(dataDir)))),
      Effect.scoped,
      Effect.orDie
    )
  )

const organizationWrites = declareWrites("organizations")
const creditWrites = declareWrites("organizations#credits")
const knowledgebaseWrites = declareWrites("knowledgebases")
const keyWrites = declareWrites("api_keys")
const settingWrites = declareWrites("settings")

const seedOrganization = (sql: SqlClient.SqlClient, id: string) =>
  sql`INSERT INTO organizations (id, slug, name, plan, gates, credits_remaining, credits_used, created_at)
      VALUES (${id}, ${id}, ${id}, 'pro', '[]', 10, 0, '2026-11-23T00:00:00.000Z')`.pipe(writing(organizationWrites))

// The schema's trigger bodies are read for the tables they write (statements declare theirs; the
// declared credits group is tested in write-declaration.test.ts).
it("reads the tables a trigger's body writes, wherever the write sits in the text", () => {
  expect([...tablesWrittenBy("INSERT INTO knowledgebases (id) VALUES (?)")]).toEqual(["knowledgebases"])
  expect([...tablesWrittenBy("UPDATE api_keys SET revoked_at = ? WHERE id = ?")]).toEqual(["api_keys"])
  expect([...tablesWrittenBy('DELETE FROM "members" WHERE id = ?')]).toEqual(["members"])
  expect([...tablesWrittenBy('UPDATE main."api_keys" SET name = ?')]).toEqual(["api_keys"])
  expect([...tablesWrittenBy("WITH x AS (SELECT 1) UPDATE organizations SET plan = 'pro' RETURNING id")]).toEqual(["organizations"])
  expect([...tablesWrittenBy("SELECT * FROM api_keys WHERE id = ?")]).toEqual([])
  expect([...tablesWrittenBy("COMMIT")]).toEqual([])
  expect([...tablesWrittenBy("CREATE INDEX x ON api_keys (name)")]).toEqual(["*"])
})

it("a charge of an organization's credits leaves its cached credentials; a change of its plan does not", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writes = yield* WriteTransactions
      const credentials = (yield* CacheVersions).of(["organizations", "members", "api_keys"])
      yield* seedOrganization(sql, "org-credits")
      const before = credentials()
      yield* writes.run(function* () {
        yield* txRun(
          "UPDATE organizations SET credits_remaining = credits_remaining - 1, credits_used = credits_used + 1 WHERE id = ? AND credits_remaining > 0",
          ["org-credits"],
          creditWrites
        )
      })
      yield* sql`UPDATE organizations SET credits_remaining = credits_remaining + 1, credits_used = credits_used - 1 WHERE id = 'org-credits'`.pipe(writing(creditWrites))
      const afterCharges = credentials()
      yield* sql`UPDATE organizations SET plan = 'agency' WHERE id = 'org-credits'`.pipe(writing(organizationWrites))
      return { before, afterCharges, afterPlan: credentials() }
    })
  )
  expect(seen.afterCharges).toBe(seen.before)
  expect(seen.afterPlan).not.toBe(seen.afterCharges)
})

it("a commit of this process leaves a cache alone unless it wrote one of the cache's tables", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const versions = yield* CacheVersions
      const credentials = versions.of(["organizations", "members", "api_keys"])
      const listing = versions.of(["knowledgebases"])
      yield* seedOrganization(sql, "org-a")
      const before = [credentials(), listing()]
      yield* sql`INSERT INTO knowledgebases (id, organization_id, name, description, created_at, updated_at)
                 VALUES ('kb-1', 'org-a', 'n', '', '2026-11-23T00:00:00.000Z', '2026-11-23T00:00:00.000Z')`.pipe(writing(knowledgebaseWrites))
      const afterCreate = [credentials(), listing()]
      yield* sql`UPDATE api_keys SET revoked_at = 'now' WHERE organization_id = 'org-a'`.pipe(writing(keyWrites))
      const afterRevoke = [credentials(), listing()]
      return { before, afterCreate, afterRevoke }
    })
  )
  expect(seen.afterCreate[0]).toBe(seen.before[0])
  expect(seen.afterCreate[1]).not.toBe(seen.before[1])
  expect(seen.afterRevoke[0]).not.toBe(seen.afterCreate[0])
  expect(seen.afterRevoke[1]).toBe(seen.afterCreate[1])
})

it("deleting an organization changes the versions of its keys (ON DELETE CASCADE) and of the page search index (cascade to pages, then their trigger); a settings write neither", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const versions = yield* CacheVersions
      const keys = versions.of(["api_keys"])
      const search = versions.of(["pages_fts"])
      yield* seedOrganization(sql, "org-b")
      const before = [keys(), search()]
      yield* sql`INSERT INTO settings (name, value) VALUES ('unrelated', 'x')`.pipe(writing(settingWrites))
      const afterSetting = [keys(), search()]
      yield* sql`DELETE FROM organizations WHERE id = 'org-b'`.pipe(writing(organizationWrites))
      const afterDelete = [keys(), search()]
      return { before, afterSetting, afterDelete }
    })
  )
  expect(seen.afterSetting).toEqual(seen.before)
  expect(seen.afterDelete[0]).not.toBe(seen.before[0])
  expect(seen.afterDelete[1]).not.toBe(seen.before[1])
})

const commitElsewhere = (name: string, timeout = 5_000) => {
  const other = new Database(databaseFile(dataDir), { timeout })
  try {
    other.prepare("INSERT INTO settings (name, value) VALUES (?, 'x')").run(name)
  } finally {
    other.close()
  }
}

it("a commit of another connection changes every version; while a transaction of this process is open none can be made (BEGIN IMMEDIATE)", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const keys = (yield* CacheVersions).of(["api_keys"])
      const before = keys()
      const steady = keys()
      commitElsewhere("other-1")
      const afterOther = keys()
      const inside = yield* sql.withTransaction(
        Effect.gen(function* () {
          const atStart = keys()
          const refused = (() => {
            try {
              commitElsewhere("other-2", 0)
              return null
            } catch (error) {
              return (error as { code?: string }).code
            }
          })()
          const afterRefused = keys()
          yield* sql`INSERT INTO settings (name, value) VALUES ('own-write', 'x')`.pipe(writing(settingWrites))
          return { atStart, refused, afterRefused }
        })
      )
      const afterOwnCommit = keys()
      commitElsewhere("other-3")
      const afterOtherAgain = keys()
      return { before, steady, afterOther, inside, afterOwnCommit, afterOtherAgain }
    })
  )
  expect(seen.steady).toBe(seen.before)
  expect(seen.afterOther).not.toBe(seen.before)
  expect(seen.inside.atStart).toBe(seen.afterOther)
  expect(seen.inside.refused).toBe("SQLITE_BUSY")
  expect(seen.inside.afterRefused).toBe(seen.inside.atStart)
  expect(seen.afterOwnCommit).toBe(seen.inside.atStart)
  expect(seen.afterOtherAgain).not.toBe(seen.afterOwnCommit)
})

it("an own commit that wrote other tables, through @effect/sql or the fast path, leaves the version; one that wrote its tables moves it", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writes = yield* WriteTransactions
      const keys = (yield* CacheVersions).of(["api_keys"])
      const before = keys()
      yield* sql.withTransaction(sql`INSERT INTO settings (name, value) VALUES ('own-1', 'x')`.pipe(writing(settingWrites)))
      yield* writes.run(function* () {
        yield* txRun("INSERT INTO settings (name, value) VALUES ('own-2', 'x')", [], settingWrites)
      })
      yield* sql`INSERT INTO settings (name, value) VALUES ('own-3', 'x')`.pipe(writing(settingWrites))
      const afterOther = keys()
      yield* writes.run(function* () {
        yield* txRun("UPDATE api_keys SET name = name WHERE id = 'none'", [], keyWrites)
      })
      const afterKeys = keys()
      return { before, afterOther, afterKeys }
    })
  )
  expect(seen.afterOther).toBe(seen.before)
  expect(seen.afterKeys).not.toBe(seen.afterOther)
})

it("without the SQLite writer (PostgreSQL) the version is the backend's data version, whatever the tables", async () => {
  let dataVersion = 7
  const readings = await Effect.runPromise(
    Effect.gen(function* () {
      const version = (yield* CacheVersions).of(["api_keys"])
      const first = [version(), version()]
      dataVersion = 8
      return [...first, version()]
    }).pipe(
      Effect.provide(CacheVersions.DefaultWithoutDependencies),
      Effect.provideService(ReadConnection, { dataVersion: () => dataVersion } as unknown as ReadConnection)
    )
  )
  expect(readings).toEqual([7, 7, 8])
})
