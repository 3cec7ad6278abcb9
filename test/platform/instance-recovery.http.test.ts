/**
 * Recovery with several instances on one PostgreSQL database (issue 13): an instance's start-up
 * recovery and every live instance's periodic sweep take over only the work of instances that are
 * gone (the instance registry, migration 0015). A running execution and ingestion job of a live
 * instance survive another's start; those of an instance killed with SIGKILL are finished `failed`
 * with the credit given back once, and requeued and indexed once, by the survivors within the
 * lease. Heartbeats are short here (250 ms, a lease of 3 s). (pg project only.)
 */
import { Effect } from "effect"
import type { ServerResponse } from "node:http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openAdmin } from "../../server/admin.js"
import { newId } from "../../server/platform/ids.js"
import { abandonedByServer } from "../../server/runtime/runs/reasons.js"
import { RunService } from "../../server/runtime/runs/service.js"
import { type FakeOpenAi, type FakeResponse, say, startFakeOpenAi } from "../support/fake-openai.js"
import { organizationId, sql } from "../support/fixtures.js"
import { createTestDatabase } from "../support/postgres.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"
import { startServerProcess } from "../support/server-process.js"
import { changesOf, organizationOf, setCredits } from "../support/knowledge.js"
import { waitForSource } from "../support/sources.js"
import { type WebServer, startWebServer } from "../support/web-server.js"
import { createAgent } from "../runtime/support.js"
import { eventually, sleep } from "../support/timing.js"

// A lease of 3 s: in-process instances share one event loop, and another's start blocks it for a while.
const instances = { heartbeatMs: 250, leaseBeats: 12 }
const leaseMs = instances.heartbeatMs * instances.leaseBeats

let database: { readonly url: string; readonly drop: () => Promise<void> }
let fake: FakeOpenAi
let web: WebServer
/** Fetches of `/held/…` wait here until released while `holding`; the others are answered at once. */
const held: Array<ServerResponse> = []
let holding = true
const answer = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
  res.end(Array.from({ length: 30 }, (_, i) => `Paragraph ${i} about the lighthouse keeper's logbook.`).join("\n\n"))
}
const releaseHeld = () => held.splice(0).forEach(answer)
let a: TestServer
let b: TestServer | undefined
let agent: string
let kb: string

/** Options every instance shares: the database, the fake model, loopback fetches, short heartbeats. */
const shared = () => ({
  database: database.url,
  allowPrivateUrls: true,
  requestsPerMinute: 100_000,
  model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 },
  instances
})
/** In-process instances poll for jobs rarely: a job is taken by the instance it was given to (or that requeued it). */
const inProcess = () => ({ ...shared(), ingestion: { pollMs: 60_000 } })

beforeAll(async () => {
  database = await createTestDatabase()
  fake = await startFakeOpenAi((request): FakeResponse => {
    const last = JSON.stringify(request.body?.messages?.at(-1) ?? "")
    return last.includes("hold") ? { parts: [{ kind: "text", text: "thinking" }, { kind: "hang" }] } : say("ok")
  })
  web = await startWebServer((req, res) => (holding && req.url?.startsWith("/held/") ? held.push(res) : answer(res)))
  a = await startTestServer({ clock: new ManualClock(), server: inProcess() })
  agent = await createAgent(a, { model: "fake-model" })
  kb = (await a.request("POST", "/knowledgebases", { body: { name: "Recovered" } })).body.knowledgebase.id as string
})

afterAll(async () => {
  releaseHeld()
  await b?.stop()
  await a.stop()
  await fake.close()
  await web.close()
  await database.drop()
})

const credits = async () => (await organizationOf(a)).creditsRemaining
const executionOf = async (id: string) =>
  (await sql(a, (db) => db<{ status: string; claimed_by: string | null; error: string | null }>`
    SELECT status, claimed_by, error FROM executions WHERE id = ${id}`))[0]!
const jobOf = async (sourceId: string) =>
  (await sql(a, (db) => db<{ state: string; attempts: number; claimed_by: string | null }>`
    SELECT state, attempts, claimed_by FROM ingestion_jobs WHERE source_id = ${sourceId}`))[0] ?? null
const runningExecutionIds = async () =>
  (await sql(a, (db) => db<{ id: string }>`SELECT id FROM executions WHERE status = 'running'`)).map((row) => row.id)
const instanceIdsOf = async (pid: number) =>
  (await sql(a, (db) => db<{ id: string }>`SELECT id FROM service_instances WHERE pid = ${pid}`)).map((row) => row.id)
/** Passages of a source, and how many distinct positions they hold (equal: indexed once). */
const passagesOf = async (sourceId: string) => {
  const [row] = await sql(a, (db) => db<{ rows: number; numbers: number }>`
    SELECT count(*) AS rows, count(DISTINCT seq) AS numbers FROM passages WHERE source_id = ${sourceId}`)
  return { rows: Number(row!.rows), numbers: Number(row!.numbers) }
}
/** The second in-process instance, started once (by the first test that needs it). */
const startSecond = async () => (b ??= await startTestServer({ clock: a.clock, key: a.key, server: inProcess() }))
const fetchesOf = (path: string) => web.requests.filter((request) => request.url === path).length

describe("another instance's start leaves a live instance's work alone", () => {
  it("a running execution keeps running and its credit charged; a running job keeps running and is indexed once", async () => {
    await setCredits(a, 10)
    const seen = fake.requests.length
    const turn = a.request("POST", `/agents/${agent}/conversation`, { body: { message: "hold on" } })
    await eventually(async () => fake.requests.length > seen && (await runningExecutionIds()).length === 1)
    const [executionId] = await runningExecutionIds()
    const upload = await a.request("POST", `/knowledgebases/${kb}/sources`, { body: { name: "Held", url: `${web.origin}/held/live.txt` } })
    expect(upload.status).toBe(202)
    const sourceId = upload.body.source.id as string
    await eventually(async () => held.length === 1)
    const running = await executionOf(executionId!)
    expect(running.status).toBe("running")
    expect(running.claimed_by).not.toBeNull()
    expect(await jobOf(sourceId)).toMatchObject({ state: "running", attempts: 1, claimed_by: running.claimed_by })
    expect(await credits()).toBe(9)

    b = await startSecond()
    // B's start-up recovery has run; let both sweep a few times (every 250 ms).
    await sleep(1_500)
    expect(await executionOf(executionId!)).toMatchObject({ status: "running", claimed_by: running.claimed_by, error: null })
    expect(await jobOf(sourceId)).toMatchObject({ state: "running", attempts: 1, claimed_by: running.claimed_by })
    expect(await credits()).toBe(9)

    releaseHeld()
    expect(await waitForSource(b, kb, sourceId)).toMatchObject({ status: "ready", errorMessage: null })
    expect(fetchesOf("/held/live.txt")).toBe(1)
    const passages = await passagesOf(sourceId)
    expect(passages.rows).toBeGreaterThan(0)
    expect(passages.rows).toBe(passages.numbers)
    // The turn ends as its own instance ends it: cancelled there, its credit given back there, once.
    const cancelled = await b.request("GET", `/executions/${executionId}`)
    expect(cancelled.body.execution.status).toBe("running")
    expect((await a.request("POST", `/executions/${executionId}/cancel`)).body.execution).toMatchObject({ status: "cancelled", creditsCharged: 0 })
    expect((await turn).status).toBe(409)
    expect(await credits()).toBe(10)
  })
})

describe("an instance killed with SIGKILL", () => {
  it("its running execution is finished failed with its credit given back once, its job requeued and indexed once, by the survivors", async () => {
    await startSecond()
    const dataDir = mkdtempSync(join(tmpdir(), "svc-killed-"))
    const killed = await startServerProcess({ ...shared(), dataDir })
    try {
      await setCredits(a, 10)
      const seen = fake.requests.length
      const turn = killed.request("POST", `/agents/${agent}/conversation`, a.key, { message: "hold everything" }).catch(() => null)
      await eventually(async () => fake.requests.length > seen && (await runningExecutionIds()).length === 1, 10_000)
      const [executionId] = await runningExecutionIds()
      const upload = await killed.request("POST", `/knowledgebases/${kb}/sources`, a.key, { name: "Crashed", url: `${web.origin}/held/killed.txt` })
      expect(upload.status).toBe(202)
      const sourceId = upload.body.source.id as string
      await eventually(async () => held.length === 1, 10_000)
      const [killedId] = await instanceIdsOf(killed.pid)
      expect(killedId).toBeDefined()
      expect((await executionOf(executionId!)).claimed_by).toBe(killedId)
      expect(await jobOf(sourceId)).toMatchObject({ state: "running", attempts: 1, claimed_by: killedId })
      expect(await credits()).toBe(9)

      await killed.kill()
      held.splice(0).forEach((res) => res.destroy())
      holding = false
      const killedAt = Date.now()
      await eventually(async () => (await executionOf(executionId!)).status !== "running", 4 * leaseMs + 5_000)
      const recoveredAfter = Date.now() - killedAt
      expect(await executionOf(executionId!)).toMatchObject({ status: "failed", error: abandonedByServer })
      expect(await credits()).toBe(10)
      expect(await waitForSource(a, kb, sourceId)).toMatchObject({ status: "ready", errorMessage: null })
      expect(await jobOf(sourceId)).toBeNull()
      expect(recoveredAfter).toBeLessThan(leaseMs + 4_000)

      // More sweeps by both survivors change nothing: the credit came back once, the job ran once more.
      await sleep(1_500)
      expect(await credits()).toBe(10)
      expect(await executionOf(executionId!)).toMatchObject({ status: "failed" })
      expect(fetchesOf("/held/killed.txt")).toBe(2)
      const passages = await passagesOf(sourceId)
      expect(passages.rows).toBeGreaterThan(0)
      expect(passages.rows).toBe(passages.numbers)
      const readies = (await changesOf(a, kb)).filter((entry) => entry.id === sourceId && entry.change === "ready")
      expect(readies).toHaveLength(1)
      await turn
    } finally {
      await killed.kill()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)

  it("instances recovering the same gone instance's executions at once give each credit back once", async () => {
    const count = 20
    const second = await startSecond()
    await setCredits(a, 100 - count)
    const org = await organizationId(a)
    const gone = newId()
    const ids = Array.from({ length: count }, () => newId())
    await sql(a, (db) =>
      Effect.forEach(ids, (id) =>
        db`INSERT INTO executions (id, organization_id, kind, target_id, version, draft, conversation_id, status, steps, tools_called,
             credits_charged, started_at, claimed_by)
           VALUES (${id}, ${org}, 'transaction', ${agent}, NULL, 0, NULL, 'running', '[]', '[]', 1, ${new Date().toISOString()}, ${gone})`
      )
    )
    const third = openAdmin({ dataDir: a.dataDir, database: database.url })
    try {
      const sweep = Effect.flatMap(RunService, (runs) => runs.recoverAbandoned("sweep"))
      const taken = await Promise.all([a.admin(sweep), second.admin(sweep), third.run(sweep), a.admin(sweep), second.admin(sweep)])
      expect(taken.reduce((sum, n) => sum + n, 0)).toBeLessThanOrEqual(count)
      await eventually(async () => Number((await sql(a, (db) => db<{ n: number }>`SELECT count(*) AS n FROM executions WHERE claimed_by = ${gone} AND status = 'running'`))[0]!.n) === 0)
      const failed = await sql(a, (db) => db<{ n: number }>`SELECT count(*) AS n FROM executions WHERE claimed_by = ${gone} AND status = 'failed' AND credits_charged = 0`)
      expect(Number(failed[0]!.n)).toBe(count)
      await sleep(1_500)
      expect(await credits()).toBe(100)
    } finally {
      await third.close()
    }
  })
})
