/**
 * Cache versions on a real database: this process's commits change the version of a cache only
 * when they wrote one of its tables (directly, through a trigger or a cascading foreign key), any
 * commit of another connection changes every version, and inside an open `@effect/sql`
 * transaction no version is given (the writer cannot see other commits then).
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
import { tablesWrittenBy } from "../../server/platform/sql/write-tracking.js"

let dataDir: string
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "svc-cache-versions-"))
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const run = <A>(body: Effect.Effect<A, unknown, CacheVersions | SqlClient.SqlClient>) =>
  Effect.runPromise(
    body.pipe(Effect.provide(CacheVersions.Default.pipe(Layer.provideMerge(DatabaseLive(dataDir)))), Effect.scoped, Effect.orDie)
  )

const seedOrganization = (sql: SqlClient.SqlClient, id: string) =>
  sql`INSERT INTO organizations (id, slug, name, plan, gates, credits_remaining, credits_used, created_at)
      VALUES (${id}, ${id}, ${id}, 'pro', '[]', 10, 0, '2026-11-23T00:00:00.000Z')`

it("reads the tables a statement writes, wherever the write sits in the text", () => {
  expect([...tablesWrittenBy("INSERT INTO knowledgebases (id) VALUES (?)")]).toEqual(["knowledgebases"])
  expect([...tablesWrittenBy("UPDATE api_keys SET revoked_at = ? WHERE id = ?")]).toEqual(["api_keys"])
  expect([...tablesWrittenBy('DELETE FROM "members" WHERE id = ?')]).toEqual(["members"])
  expect([...tablesWrittenBy("WITH x AS (SELECT 1) UPDATE organizations SET plan = 'pro' RETURNING id")]).toEqual(["organizations"])
  expect([...tablesWrittenBy("SELECT * FROM api_keys WHERE id = ?")]).toEqual([])
  expect([...tablesWrittenBy("COMMIT")]).toEqual([])
  expect([...tablesWrittenBy("CREATE INDEX x ON api_keys (name)")]).toEqual(["*"])
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
                 VALUES ('kb-1', 'org-a', 'n', '', '2026-11-23T00:00:00.000Z', '2026-11-23T00:00:00.000Z')`
      const afterCreate = [credentials(), listing()]
      yield* sql`UPDATE api_keys SET revoked_at = 'now' WHERE organization_id = 'org-a'`
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
      yield* sql`INSERT INTO settings (name, value) VALUES ('unrelated', 'x')`
      const afterSetting = [keys(), search()]
      yield* sql`DELETE FROM organizations WHERE id = 'org-b'`
      const afterDelete = [keys(), search()]
      return { before, afterSetting, afterDelete }
    })
  )
  expect(seen.afterSetting).toEqual(seen.before)
  expect(seen.afterDelete[0]).not.toBe(seen.before[0])
  expect(seen.afterDelete[1]).not.toBe(seen.before[1])
})

it("a commit of another connection changes every version; inside a transaction there is none", async () => {
  const seen = await run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const keys = (yield* CacheVersions).of(["api_keys"])
      const before = keys()
      const steady = keys()
      const other = new Database(databaseFile(dataDir))
      try {
        other.prepare("INSERT INTO settings (name, value) VALUES ('other-process', 'x')").run()
      } finally {
        other.close()
      }
      const afterOther = keys()
      const inside = yield* sql.withTransaction(Effect.sync(() => keys()))
      const afterTransaction = keys()
      return { before, steady, afterOther, inside, afterTransaction }
    })
  )
  expect(seen.steady).toBe(seen.before)
  expect(seen.afterOther).not.toBe(seen.before)
  expect(seen.inside).toBeNull()
  expect(seen.afterTransaction).toBe(seen.afterOther)
})
