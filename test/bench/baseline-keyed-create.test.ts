/**
 * The benchmark's baseline (bench/baseline-server.ts) does a keyed create's work as svc does: on the
 * same SQLite file, a `POST /knowledgebases` with an `Idempotency-Key` stores the row svc stores
 * (address, the body's fingerprint, `done`, status, body, a 24-hour expiry), a retry is that stored
 * answer with `Idempotent-Replayed: true` and creates nothing, another body is 409 `conflict`, a key
 * over 64 characters is 400. Spawns dist/bench/svc-launcher.js and dist/bench/baseline-server.js:
 * build first, as for the CLI tests.
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Child, spawnChild } from "../../bench/children.js"
import type { BaselineReady, Ready, SvcReady } from "../../bench/protocol.js"

describe("the baseline's keyed create", () => {
  let dataDir = ""
  let svc: Child<SvcReady>
  let baseline: Child<BaselineReady>
  const children: Array<Child<Ready>> = []

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "svc-baseline-keyed-"))
    svc = await spawnChild<SvcReady>({
      name: "svc",
      script: resolve("dist/bench/svc-launcher.js"),
      args: ["--data-dir", dataDir, "--port", "0", "--post-orgs", "1"],
      logFile: join(dataDir, "svc.stderr.log")
    })
    children.push(svc)
    baseline = await spawnChild<BaselineReady>({
      name: "baseline",
      script: resolve("dist/bench/baseline-server.js"),
      args: ["--db", join(dataDir, "svc.sqlite"), "--port", "0"],
      logFile: join(dataDir, "baseline.stderr.log")
    })
    children.push(baseline)
  }, 60_000)

  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop()))
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })

  const create = (baseUrl: string, key: string, idempotencyKey: string, body: Record<string, unknown>) =>
    fetch(`${baseUrl}/knowledgebases`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify(body)
    })

  /** Sends a keyed create, its retry, another body under the same key and an over-long key; answers what came back. */
  const exercise = async (baseUrl: string, key: string) => {
    const first = await create(baseUrl, key, "keyed-1", { name: "Keyed", description: "Created once." })
    const firstText = await first.text()
    // the same body with its keys in another order: the same fingerprint
    const retry = await create(baseUrl, key, "keyed-1", { description: "Created once.", name: "Keyed" })
    const retryText = await retry.text()
    const other = await create(baseUrl, key, "keyed-1", { name: "Another" })
    const tooLong = await create(baseUrl, key, "k".repeat(65), { name: "Too long a key" })
    return {
      first: { status: first.status, replayed: first.headers.get("idempotent-replayed"), text: firstText },
      retry: { status: retry.status, replayed: retry.headers.get("idempotent-replayed"), text: retryText },
      other: { status: other.status, body: (await other.json()) as { error: { code: string } } },
      tooLong: { status: tooLong.status, body: (await tooLong.json()) as { error: { code: string } } }
    }
  }

  it("stores the row svc stores, replays it, refuses another body and an over-long key", async () => {
    const bySvc = await exercise(svc.ready.baseUrl, svc.ready.postKeys.svc[0]!)
    const byBaseline = await exercise(baseline.ready.baseUrl, svc.ready.postKeys.baseline[0]!)

    for (const answers of [bySvc, byBaseline]) {
      expect(answers.first.status).toBe(201)
      expect(answers.first.replayed).toBeNull()
      expect(answers.retry).toEqual({ status: 201, replayed: "true", text: answers.first.text })
      expect(answers.other.status).toBe(409)
      expect(answers.other.body.error.code).toBe("conflict")
      expect(answers.tooLong.status).toBe(400)
      expect(answers.tooLong.body.error.code).toBe("invalid_request")
    }
    const svcCreated = (JSON.parse(bySvc.first.text) as { knowledgebase: Record<string, unknown> }).knowledgebase
    const baselineCreated = (JSON.parse(byBaseline.first.text) as { knowledgebase: Record<string, unknown> }).knowledgebase
    expect(Object.keys(baselineCreated).sort()).toEqual(Object.keys(svcCreated).sort())
    expect({ ...baselineCreated, id: "", createdAt: "", updatedAt: "" }).toEqual({ ...svcCreated, id: "", createdAt: "", updatedAt: "" })

    const db = new Database(join(dataDir, "svc.sqlite"), { readonly: true })
    try {
      const rows = db
        .prepare(
          `SELECT o.slug, k.address, k.key, k.request_hash, k.state, k.status, k.body, k.expires_at - k.created_at AS window
            FROM idempotency_keys k JOIN organizations o ON o.id = k.organization_id WHERE k.key = 'keyed-1' ORDER BY o.slug`
        )
        .all() as Array<{ slug: string; address: string; key: string; request_hash: string; state: string; status: number; body: string; window: number }>
      expect(rows.map((row) => row.slug)).toEqual(["bench-post-baseline-1", "bench-post-svc-1"])
      const [byBaselineRow, bySvcRow] = rows
      expect(byBaselineRow!.body).toBe(byBaseline.first.text)
      expect(bySvcRow!.body).toBe(bySvc.first.text)
      const shape = (row: (typeof rows)[number]) => ({ ...row, slug: "", body: "" })
      expect(shape(byBaselineRow!)).toEqual(shape(bySvcRow!))
      expect(bySvcRow).toMatchObject({ address: "POST /api/v1/knowledgebases", state: "done", status: 201, window: 24 * 60 * 60_000 })
      expect(bySvcRow!.request_hash).toMatch(/^[0-9a-f]{64}$/)

      // the retries created nothing
      const created = db
        .prepare(
          `SELECT o.slug, count(*) AS n FROM knowledgebases kb JOIN organizations o ON o.id = kb.organization_id
            WHERE kb.name = 'Keyed' GROUP BY o.slug ORDER BY o.slug`
        )
        .all()
      expect(created).toEqual([
        { slug: "bench-post-baseline-1", n: 1 },
        { slug: "bench-post-svc-1", n: 1 }
      ])
    } finally {
      db.close()
    }
  })
})
