/**
 * Migration 0025 on a database that already holds traces in `execution_traces` (migrations
 * 0001–0024): each trace moves into its execution's `trace` column, an execution without one keeps
 * null, the table goes, and running the migration again over its result changes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import migration0025 from "../../server/platform/sql/migrations/0025_execution_trace_column.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"
import { onCurrentSchema as onCurrentSchemaOf, onSchemaBefore } from "../support/migrations.js"

const dataDir = mkdtempSync(join(tmpdir(), "svc-migration-0025-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const at = "2026-11-28T10:00:00.000Z"
const trace = JSON.stringify({ spans: [{ id: "1", parentId: null, kind: "model", name: "model builtin" }], truncated: false })

const onOldSchema = onSchemaBefore(dataDir, "0025")
const onCurrentSchema = onCurrentSchemaOf(dataDir)

describe("migration 0025 moves traces into their executions", () => {
  it("copies each stored trace to its execution, leaves the others null, drops the table, and runs again as a no-op", async () => {
    await onOldSchema(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const write = <A>(statement: Effect.Effect<A, unknown>) => statement.pipe(writing(writesEveryTable))
        yield* write(sql`INSERT INTO organizations (id, slug, name, plan, credits_remaining, created_at) VALUES ('o1', 'o', 'O', 'pro', 10, ${at})`)
        for (const [id, status] of [["e1", "succeeded"], ["e2", "failed"], ["e3", "running"]] as const) {
          yield* write(sql`INSERT INTO executions (id, organization_id, kind, target_id, draft, status, started_at) VALUES (${id}, 'o1', 'agent', 'a1', 0, ${status}, ${at})`)
        }
        yield* write(sql`INSERT INTO execution_traces (execution_id, trace) VALUES ('e1', ${trace}), ('e2', '{"spans":[],"truncated":false}')`)
      })
    )

    const after = await onCurrentSchema(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ id: string; trace: string | null }>`SELECT id, trace FROM executions ORDER BY id`
        const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'execution_traces'`
        yield* migration0025
        const again = yield* sql<{ id: string; trace: string | null }>`SELECT id, trace FROM executions ORDER BY id`
        const columns = yield* sql<{ name: string }>`SELECT name FROM pragma_table_info('executions') WHERE name = 'trace'`
        return { rows, tables, again, columns }
      })
    )
    expect(after.rows).toEqual([
      { id: "e1", trace },
      { id: "e2", trace: '{"spans":[],"truncated":false}' },
      { id: "e3", trace: null }
    ])
    expect(after.tables).toEqual([])
    expect(after.again).toEqual(after.rows)
    expect(after.columns).toEqual([{ name: "trace" }])
  })
})
