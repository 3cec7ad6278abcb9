/**
 * The instance registry (migration 0015) on either backend: a serving process has a row whose lease
 * its heartbeat moves ahead of the database's clock, removed on a clean shutdown; a process that
 * never claims work (administration) writes none.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { sql } from "../support/fixtures.js"
import { dropTestDatabase, startTestServer, type TestServer } from "../support/server.js"

const instances = { heartbeatMs: 150, leaseBeats: 10 }
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ server: { instances } })
})
afterAll(() => server.stop())

/** The registry's rows with how far each lease reaches past the database's clock now. */
const rows = () =>
  sql(server, (db) =>
    db.onDialectOrElse({
      pg: () => db<{ id: string; pid: number; alive_until: number; ahead: number }>`
        SELECT id, pid, alive_until, alive_until - CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS ahead FROM service_instances`,
      orElse: () => db<{ id: string; pid: number; alive_until: number; ahead: number }>`
        SELECT id, pid, alive_until, alive_until - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS ahead FROM service_instances`
    })
  ).then((found) => found.map((row) => ({ id: row.id, pid: Number(row.pid), aliveUntil: Number(row.alive_until), ahead: Number(row.ahead) })))

describe("the instance registry", () => {
  it("a serving instance is registered (its worker claims work), its lease renewed every heartbeat; administration registers nothing", async () => {
    // One row: this server's. The admin handle the tests read through never claimed work, so it has none.
    const registered = await vi.waitFor(async () => {
      const found = await rows()
      expect(found).toHaveLength(1)
      return found[0]!
    })
    expect(registered.pid).toBe(process.pid)
    expect(registered.ahead).toBeLessThanOrEqual(instances.heartbeatMs * instances.leaseBeats + 50)
    // The heartbeat keeps moving the lease ahead of the database's clock.
    const renewed = await vi.waitFor(
      async () => {
        const [row] = await rows()
        expect(row!.id).toBe(registered.id)
        expect(row!.aliveUntil).toBeGreaterThan(registered.aliveUntil + instances.heartbeatMs)
        expect(row!.ahead).toBeGreaterThan(0)
        return row!
      },
      { timeout: 5_000 }
    )
    expect(renewed.ahead).toBeLessThanOrEqual(instances.heartbeatMs * instances.leaseBeats + 50)
  })

  it("a clean shutdown removes the row", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-registry-"))
    try {
      const other = await startTestServer({ dataDir, server: { instances } })
      await vi.waitFor(async () => expect(await sql(other, (db) => db<{ id: string }>`SELECT id FROM service_instances`)).toHaveLength(1))
      await other.stop()
      // Opened again without workers (nothing claims work, so nothing registers): the table is empty.
      const reopened = await startTestServer({ dataDir, key: other.key, server: { ingestionWorker: false } })
      try {
        expect(await sql(reopened, (db) => db<{ id: string }>`SELECT id FROM service_instances`)).toEqual([])
      } finally {
        await reopened.stop()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
      await dropTestDatabase(dataDir)
    }
  })
})
