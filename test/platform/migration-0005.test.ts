/**
 * Migration 0005 on a database that already holds data (made by migrations 0001–0004): the changes
 * feed keeps its rows, sequence numbers and high-water mark, and then keeps every new change; pages
 * and memories keep being found through full-text keys taken from their old rowids.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"
import { onCurrentSchema as onCurrentSchemaOf, onSchemaBefore } from "../support/migrations.js"

const dataDir = mkdtempSync(join(tmpdir(), "svc-migration-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const at = "2026-11-20T10:00:00.000Z"

const onOldSchema = onSchemaBefore(dataDir, "0005")
const onCurrentSchema = onCurrentSchemaOf(dataDir)

describe("migration 0005 keeps existing data", () => {
  it("keeps the feed's rows, sequences and high-water mark; pages and memories stay searchable", async () => {
    await onOldSchema(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO organizations (id, slug, name, plan, credits_remaining, created_at) VALUES ('o1', 'o', 'O', 'pro', 10, ${at})`.pipe(writing(writesEveryTable))
        yield* sql`INSERT INTO members (id, organization_id, email, role, created_at) VALUES ('m1', 'o1', 'm@example.com', 'member', ${at})`.pipe(writing(writesEveryTable))
        yield* sql`INSERT INTO knowledgebases (id, organization_id, name, created_at, updated_at) VALUES ('k1', 'o1', 'K', ${at}, ${at})`.pipe(writing(writesEveryTable))
        for (const [id, title, markdown] of [["p1", "Gone", "obsolete"], ["p2", "Kept", "walrus tusks"], ["p3", "Also", "narwhal horns"]]) {
          yield* sql`INSERT INTO pages (id, organization_id, knowledgebase_id, title, template_key, created_at, updated_at, markdown)
            VALUES (${id!}, 'o1', 'k1', ${title!}, 'page', ${at}, ${at}, ${markdown!})`.pipe(writing(writesEveryTable))
        }
        yield* sql`DELETE FROM pages WHERE id = 'p1'`.pipe(writing(writesEveryTable))
        for (const [id, text] of [["r1", "first memo"], ["r2", "prefers aisle seats"]]) {
          yield* sql`INSERT INTO memories (id, organization_id, member_id, text, created_at, updated_at) VALUES (${id!}, 'o1', 'm1', ${text!}, ${at}, ${at})`.pipe(writing(writesEveryTable))
        }
        const record = (objectId: string, change: string) =>
          sql`INSERT OR REPLACE INTO changes (organization_id, knowledgebase_id, object_type, object_id, change, changed_at)
            VALUES ('o1', 'k1', 'page', ${objectId}, ${change}, ${at})`.pipe(writing(writesEveryTable))
        yield* record("p2", "created")
        yield* record("p3", "created")
        yield* record("p2", "updated")
        yield* record("p9", "created")
        yield* sql`DELETE FROM changes WHERE object_id = 'p9'`.pipe(writing(writesEveryTable))
      })
    )

    const after = await onCurrentSchema(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const kept = yield* sql`SELECT sequence, object_id, change FROM changes ORDER BY sequence`
        yield* sql`INSERT INTO changes (organization_id, knowledgebase_id, object_type, object_id, change, changed_at)
          VALUES ('o1', 'k1', 'page', 'p3', 'updated', ${at})`.pipe(writing(writesEveryTable))
        yield* sql`INSERT INTO changes (organization_id, knowledgebase_id, object_type, object_id, change, changed_at)
          VALUES ('o1', 'k1', 'page', 'p3', 'moved', ${at})`.pipe(writing(writesEveryTable))
        const feed = yield* sql`SELECT sequence, object_id, change FROM changes ORDER BY sequence`
        const pageKeys = yield* sql`SELECT id, fts_key, rowid AS old_rowid FROM pages ORDER BY id`
        // A page inserted without a key (as the benchmark seeder once did) takes the next one.
        yield* sql`INSERT INTO pages (id, organization_id, knowledgebase_id, title, template_key, created_at, updated_at, markdown)
          VALUES ('p4', 'o1', 'k1', 'Unkeyed', 'page', ${at}, ${at}, 'beluga songs')`.pipe(writing(writesEveryTable))
        const unkeyed = yield* sql`SELECT fts_key FROM pages WHERE id = 'p4'`
        const beluga = yield* sql`SELECT p.id FROM pages_fts f JOIN pages p ON p.fts_key = f.rowid WHERE pages_fts MATCH 'beluga'`
        const walrus = yield* sql`SELECT p.id FROM pages_fts f JOIN pages p ON p.fts_key = f.rowid WHERE pages_fts MATCH 'walrus'`
        const narwhal = yield* sql`SELECT p.id FROM pages_fts f JOIN pages p ON p.fts_key = f.rowid WHERE pages_fts MATCH 'narwhal'`
        const aisle = yield* sql`SELECT m.id FROM memories_fts f JOIN memories m ON m.fts_key = f.rowid WHERE memories_fts MATCH 'aisle'`
        .pipe(writing(writesEveryTable))
        .pipe(writing(writesEveryTable))
        return { kept, feed, pageKeys, unkeyed, beluga, walrus, narwhal, aisle }
      })
    )

    expect(after.kept).toEqual([
      { sequence: 2, object_id: "p3", change: "created" },
      { sequence: 3, object_id: "p2", change: "updated" }
    ])
    // New changes continue after the old high-water mark (4, the deleted p9), and each one is kept.
    expect(after.feed).toEqual([
      ...after.kept,
      { sequence: 5, object_id: "p3", change: "updated" },
      { sequence: 6, object_id: "p3", change: "moved" }
    ])
    expect(after.pageKeys).toEqual([
      { id: "p2", fts_key: 2, old_rowid: 2 },
      { id: "p3", fts_key: 3, old_rowid: 3 }
    ])
    expect(after.unkeyed).toEqual([{ fts_key: 4 }])
    expect(after.beluga).toEqual([{ id: "p4" }])
    expect(after.walrus).toEqual([{ id: "p2" }])
    expect(after.narwhal).toEqual([{ id: "p3" }])
    expect(after.aisle).toEqual([{ id: "r2" }])
  })
})
