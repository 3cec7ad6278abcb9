/**
 * The ingestion pipeline across time and restarts: reading a processing source refreshes a job
 * that is past its deadline (or lost) to `failed`; jobs survive a stopped server (queued ones run on
 * the next start, ones left `running` by a crash are run again, and ones interrupted too often
 * fail with a message saying so); a job queued by another process is found by polling; and a real
 * `svc serve` child process killed with SIGKILL in the middle of a job resumes it after a restart.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { runAdmin } from "../../server/admin.js"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { expectError, insertKnowledgebases, sql } from "../support/fixtures.js"
import { dropTestDatabase, knownTestDatabase, ManualClock, startTestServer, testDatabaseEnv, testDatabaseFor, type TestServer } from "../support/server.js"
import { testBackend } from "../support/postgres.js"
import { makeWorkerClock, type WorkerClock } from "../support/worker-clock.js"
import { jsonRequest } from "../support/server-process.js"
import { jobOf } from "../support/source-rows.js"
import { accepted, documentHits, fixtureBytes, readSource, uploadFixture, uploadForm, uploadJson, waitForSource } from "../support/sources.js"
import { type WebServer, startWebServer } from "../support/web-server.js"

const fast = { requestsPerMinute: 1_000_000 } as const

const dataDirs: Array<string> = []
const freshDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-ingestion-"))
  dataDirs.push(dir)
  return dir
}
afterAll(async () => {
  for (const dir of dataDirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true })
    await dropTestDatabase(dir)
  }
})

/** Servers started by a test, stopped after it whatever happens. */
const running: Array<TestServer> = []
const webServers: Array<WebServer> = []
afterEach(async () => {
  for (const server of running.splice(0).reverse()) await server.stop().catch(() => undefined)
  for (const web of webServers.splice(0)) await web.close()
})
const start = async (options: Parameters<typeof startTestServer>[0]) => {
  const server = await startTestServer(options)
  running.push(server)
  return server
}
const clocks: Array<WorkerClock> = []
afterEach(async () => {
  for (const clock of clocks.splice(0)) await clock.close()
})
/** A worker clock released after the test. */
const workerClock = async () => {
  const clock = await makeWorkerClock()
  clocks.push(clock)
  return clock
}
const stop = async (server: TestServer) => {
  running.splice(running.indexOf(server), 1)
  await server.stop()
}

const newKnowledgebase = async (server: TestServer): Promise<string> =>
  (await insertKnowledgebases(server, { count: 1, prefix: "Ingestion" }))[0]!.id
const iso = (ms: number) => new Date(ms).toISOString()
const changes = async (server: TestServer, kb: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`)
  expect(response.status).toBe(200)
  return response.body.changes as Array<any>
}
/** Marks a source's job as claimed by a worker at `startedAt`, with its deadline, as a crashed process would leave it. */
const markRunning = (server: TestServer, sourceId: string, attempts: number, startedAt: number, deadlineAt: number) =>
  sql(
    server,
    (db) => db`UPDATE ingestion_jobs SET state = 'running', attempts = ${attempts}, started_at = ${iso(startedAt)},
      deadline_at = ${iso(deadlineAt)} WHERE source_id = ${sourceId}`
  )

describe("reading a processing source refreshes its status", () => {
  it("a job running past its deadline → the read answers failed with a clear errorMessage; the feed says failed", async () => {
    const clock = new ManualClock()
    const server = await start({ clock, server: { ...fast, ingestionWorker: false, ingestion: { jobTimeoutMs: 5_000 } } })
    const kb = await newKnowledgebase(server)
    const source = accepted(await uploadJson(server, kb, { name: "Slow", contentText: "Never indexed by anyone." }))
    expect(await jobOf(server, source.id)).toMatchObject({ state: "queued", attempts: 0 })
    expect(await changes(server, kb)).toEqual([expect.objectContaining({ id: source.id, change: "created" })])

    // A queued job waits for a worker; reading does not fail it.
    expect((await readSource(server, kb, source.id)).status).toBe("processing")

    const started = clock.now()
    await markRunning(server, source.id, 1, started, started + 5_000)
    expect((await readSource(server, kb, source.id)).status).toBe("processing")
    clock.advance(4_999)
    expect((await readSource(server, kb, source.id)).status).toBe("processing")
    clock.advance(2)

    const failed = await readSource(server, kb, source.id)
    expect(failed).toMatchObject({ id: source.id, status: "failed", searchable: false, updatedAt: iso(clock.now()) })
    expect(failed.errorMessage).toMatch(/did not finish within 5 seconds/)
    expect(await jobOf(server, source.id)).toBeNull()
    expect(await changes(server, kb)).toEqual([
      expect.objectContaining({ id: source.id, type: "source", change: "created" }),
      expect.objectContaining({ id: source.id, type: "source", change: "failed" })
    ])

    // It stays failed, in the list and the detail read too.
    clock.advance(60_000)
    expect(await readSource(server, kb, source.id)).toEqual(failed)
    const list = await server.request("GET", `/knowledgebases/${kb}/sources`)
    expect(list.body.sources).toEqual([failed])
  })

  it("a processing source whose job is gone → the read answers failed (indexing was lost)", async () => {
    const server = await start({ server: { ...fast, ingestionWorker: false } })
    const kb = await newKnowledgebase(server)
    const source = accepted(await uploadJson(server, kb, { name: "Orphan", contentText: "A job that vanished." }))
    await sql(server, (db) => db`DELETE FROM ingestion_jobs WHERE source_id = ${source.id}`)
    const failed = await readSource(server, kb, source.id)
    expect(failed.status).toBe("failed")
    expect(failed.errorMessage).toMatch(/lost|upload .* again/i)
  })

  it("a ready or failed source is never touched by a read, whatever its job row says", async () => {
    const clock = new ManualClock()
    const server = await start({ clock, server: { ...fast, ingestion: { jobTimeoutMs: 5_000 } } })
    const kb = await newKnowledgebase(server)
    const source = accepted(await uploadJson(server, kb, { name: "Done", contentText: "Indexed quickly." }))
    const ready = await waitForSource(server, kb, source.id)
    expect(ready.status).toBe("ready")
    clock.advance(3_600_000)
    expect(await readSource(server, kb, source.id)).toEqual(ready)
  })

  it("the deadline is the one the job was given: a running job within its deadline stays processing", async () => {
    const clock = new ManualClock()
    const server = await start({ clock, server: { ...fast, ingestionWorker: false, ingestion: { jobTimeoutMs: 120_000 } } })
    const kb = await newKnowledgebase(server)
    const source = accepted(await uploadJson(server, kb, { name: "Patient", contentText: "Still within its two minutes." }))
    await markRunning(server, source.id, 1, clock.now(), clock.now() + 120_000)
    clock.advance(119_000)
    expect((await readSource(server, kb, source.id)).status).toBe("processing")
    clock.advance(2_000)
    const failed = await readSource(server, kb, source.id)
    expect(failed.status).toBe("failed")
    expect(failed.errorMessage).toMatch(/120 seconds/)
  })
})

describe("jobs survive restarts", () => {
  it("queued jobs, and jobs a crashed process left running, run on the next start; the sources become ready", async () => {
    const dataDir = freshDataDir()
    const clock = new ManualClock()
    const first = await start({ dataDir, clock, server: { ...fast, ingestionWorker: false } })
    const key = first.key
    const kb = await newKnowledgebase(first)
    const queued = accepted(await uploadFixture(first, kb, "notes.txt"))
    const crashed = accepted(await uploadFixture(first, kb, "guide.md"))
    const crashedTwice = accepted(await uploadFixture(first, kb, "handbook.pdf"))
    const bare = accepted(await uploadFixture(first, kb, "customers.csv"))
    await markRunning(first, crashed.id, 1, clock.now(), clock.now() + 120_000)
    await markRunning(first, crashedTwice.id, 2, clock.now(), clock.now() + 120_000)
    // Only the state and the attempt count, no start time or deadline.
    await sql(first, (db) => db`UPDATE ingestion_jobs SET state = 'running', attempts = 1 WHERE source_id = ${bare.id}`)
    expect((await readSource(first, kb, queued.id)).status).toBe("processing")
    await stop(first)

    const second = await start({ dataDir, clock, key, server: fast })
    for (const source of [queued, crashed, crashedTwice, bare]) {
      expect(await waitForSource(second, kb, source.id)).toMatchObject({ status: "ready", searchable: true, errorMessage: null })
      expect(await jobOf(second, source.id)).toBeNull()
    }
    expect((await documentHits(second, kb, "handover")).map((hit) => hit.citation.sourceId)).toEqual([queued.id])
    expect((await documentHits(second, kb, "troubleshooting")).map((hit) => hit.citation.sourceId)).toEqual([crashed.id])
    expect((await documentHits(second, kb, "mileage")).map((hit) => hit.citation.sourceId)).toEqual([crashedTwice.id])
    const feed = await changes(second, kb)
    expect(feed.filter((entry) => entry.change !== "created").map((entry) => [entry.id, entry.change]).sort()).toEqual(
      [
        [queued.id, "ready"],
        [crashed.id, "ready"],
        [crashedTwice.id, "ready"],
        [bare.id, "ready"]
      ].sort()
    )
  })

  it("a job left running whose deadline passed while the server was down is still run again after the restart", async () => {
    const dataDir = freshDataDir()
    const clock = new ManualClock()
    const first = await start({ dataDir, clock, server: { ...fast, ingestionWorker: false } })
    const key = first.key
    const kb = await newKnowledgebase(first)
    const source = accepted(await uploadFixture(first, kb, "customers.csv"))
    await markRunning(first, source.id, 1, clock.now(), clock.now() + 120_000)
    await stop(first)

    clock.advance(60 * 60_000)
    const second = await start({ dataDir, clock, key, server: fast })
    expect(await waitForSource(second, kb, source.id)).toMatchObject({ status: "ready", errorMessage: null })
  })

  it("a job left running with attempts >= maxAttempts fails on the next start, errorMessage saying it was interrupted", async () => {
    const dataDir = freshDataDir()
    const clock = new ManualClock()
    const first = await start({ dataDir, clock, server: { ...fast, ingestionWorker: false } })
    const key = first.key
    const kb = await newKnowledgebase(first)
    const exhausted = accepted(await uploadJson(first, kb, { name: "Crashes the server", contentText: "Three strikes." }))
    const over = accepted(await uploadJson(first, kb, { name: "Crashed even more", contentText: "Five strikes." }))
    const onceMore = accepted(await uploadJson(first, kb, { name: "Two strikes", contentText: "One attempt left." }))
    await markRunning(first, exhausted.id, 3, clock.now(), clock.now() + 120_000)
    await markRunning(first, over.id, 5, clock.now(), clock.now() + 120_000)
    await markRunning(first, onceMore.id, 2, clock.now(), clock.now() + 120_000)
    await stop(first)

    const second = await start({ dataDir, clock, key, server: fast })
    const failed = await waitForSource(second, kb, exhausted.id)
    expect(failed).toMatchObject({ status: "failed", searchable: false })
    expect(failed.errorMessage).toMatch(/interrupted 3 times/)
    const failedToo = await waitForSource(second, kb, over.id)
    expect(failedToo.errorMessage).toMatch(/interrupted 5 times/)
    expect((await waitForSource(second, kb, onceMore.id)).status).toBe("ready")
    expect(await jobOf(second, exhausted.id)).toBeNull()
    const feed = await changes(second, kb)
    expect(feed.filter((entry) => entry.id === exhausted.id).map((entry) => entry.change)).toEqual(["created", "failed"])
  })

  it("maxAttempts is a setting: with maxAttempts 1 a job interrupted once fails", async () => {
    const dataDir = freshDataDir()
    const first = await start({ dataDir, server: { ...fast, ingestionWorker: false } })
    const key = first.key
    const kb = await newKnowledgebase(first)
    const source = accepted(await uploadJson(first, kb, { name: "Fragile", contentText: "One chance only." }))
    await markRunning(first, source.id, 1, first.clock.now(), first.clock.now() + 120_000)
    await stop(first)
    const second = await start({ dataDir, key, server: { ...fast, ingestion: { maxAttempts: 1 } } })
    const failed = await waitForSource(second, kb, source.id)
    expect(failed.status).toBe("failed")
    expect(failed.errorMessage).toMatch(/interrupted once/)
  })

  it("a job queued by another process on the same data directory is found by the worker's next poll, not before", async () => {
    const dataDir = freshDataDir()
    const clock = new ManualClock()
    const time = await workerClock()
    const worker = await start({ dataDir, clock, server: { ...fast, ingestion: { pollMs: 1_000, clock: time.clock } } })
    const key = worker.key
    await time.idle()
    // A second server on the same data directory, without a worker: its uploads wake nobody.
    const uploader = await start({ dataDir, clock, key, server: { ...fast, ingestionWorker: false } })
    const kb = await newKnowledgebase(uploader)
    const source = accepted(await uploadFixture(uploader, kb, "guide.md"))

    // Until its poll is due the worker sleeps: the job waits, queued.
    await time.advance(999)
    expect((await readSource(uploader, kb, source.id)).status).toBe("processing")
    expect(await jobOf(uploader, source.id)).toMatchObject({ state: "queued", attempts: 0 })
    await time.advance(1)
    await time.idle()
    expect(await readSource(uploader, kb, source.id)).toMatchObject({ status: "ready", searchable: true })
  })
})

/** The repository root, where `bin/svc.js` runs from (it loads the compiled `dist/`). */
const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

interface Serve {
  readonly child: ChildProcess
  readonly ready: { baseUrl: string; bootstrapKey: string | null }
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderr: () => string
}

/** `node bin/svc.js serve --data-dir D --port 0 --json ...`, resolved with its ready line. */
const serve = (dataDir: string, args: ReadonlyArray<string>): Promise<Serve> =>
  new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CI: "true", ...testDatabaseEnv(dataDir) }
    delete env.SVC_DATA_DIR
    const child = spawn(process.execPath, [join(repoRoot, "bin", "svc.js"), "serve", "--data-dir", dataDir, "--port", "0", "--json", ...args], {
      cwd: repoRoot,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.on("exit", (code, signal) => done({ code, signal }))
    )
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      if (stdout.includes("\n")) resolve({ child, ready: JSON.parse(stdout.split("\n")[0]!), exited, stderr: () => stderr })
    })
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    void exited.then(({ code }) => reject(new Error(`svc serve exited with ${code} before it was ready: ${stderr}`)))
  })

describe("a real `svc serve` process killed mid-job", () => {
  const children: Array<ChildProcess> = []
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })

  const api = jsonRequest
  const poll = async (baseUrl: string, key: string, kb: string, id: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const response = await api(baseUrl, key, "GET", `/knowledgebases/${kb}/sources/${id}`)
      expect(response.status).toBe(200)
      if (response.body.source.status !== "processing" || Date.now() > deadline) return response.body.source
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it("SIGKILL while a url source is being fetched: after a restart on the same data directory the job runs again and the source is ready", async () => {
    const dataDir = freshDataDir()
    await testDatabaseFor(dataDir)
    // The page stalls (never answers) until the test lets it through.
    let stall = true
    let fetched: () => void = () => undefined
    const firstFetch = new Promise<void>((resolve) => (fetched = resolve))
    const web = await startWebServer((req, res) => {
      fetched()
      if (stall) return
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      res.end("The quokka survived the crash of the server.\n")
    })
    webServers.push(web)

    const first = await serve(dataDir, ["--allow-private-urls"])
    children.push(first.child)
    const key = first.ready.bootstrapKey!
    expect(key).toMatch(/^svco_/)
    const created = await api(first.ready.baseUrl, key, "POST", "/knowledgebases", { name: "Crash test" })
    expect(created.status).toBe(201)
    const kb = created.body.knowledgebase.id as string

    const upload = await api(first.ready.baseUrl, key, "POST", `/knowledgebases/${kb}/sources`, {
      name: "Stalled page",
      url: `${web.origin}/quokka.txt`
    })
    expect(upload.status).toBe(202)
    const id = upload.body.source.id as string
    // A file upload just before the crash too: indexed already or not, it must end up ready.
    const form = new FormData()
    form.append("file", new Blob([fixtureBytes("notes.txt")]), "notes.txt")
    const fileUpload = await fetch(`${first.ready.baseUrl}/knowledgebases/${kb}/sources`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: form
    })
    expect(fileUpload.status).toBe(202)
    const fileId = ((await fileUpload.json()) as any).source.id as string

    await firstFetch
    first.child.kill("SIGKILL")
    expect((await first.exited).signal).toBe("SIGKILL")

    // What the crash left behind: the job is still marked running, attempt 1.
    const left = await runAdmin(
      { dataDir, database: knownTestDatabase(dataDir) },
      Effect.flatMap(SqlClient.SqlClient, (db) => db<{ state: string; attempts: number }>`SELECT state, attempts FROM ingestion_jobs WHERE source_id = ${id}`)
    )
    expect(left).toEqual([{ state: "running", attempts: 1 }])
    expect(existsSync(join(dataDir, "svc.sqlite"))).toBe(testBackend() === "sqlite")

    stall = false
    const second = await serve(dataDir, ["--allow-private-urls"])
    children.push(second.child)
    expect(second.ready.bootstrapKey).toBeNull()
    const ready = await poll(second.ready.baseUrl, key, kb, id)
    expect(ready).toMatchObject({ id, status: "ready", searchable: true, errorMessage: null, type: "txt", url: `${web.origin}/quokka.txt` })
    expect(await poll(second.ready.baseUrl, key, kb, fileId)).toMatchObject({ status: "ready" })
    const hits = await api(second.ready.baseUrl, key, "POST", `/knowledgebases/${kb}/search`, { query: "quokka", kinds: ["documents"] })
    expect(hits.body.results.map((hit: any) => hit.citation.sourceId)).toEqual([id])

    second.child.kill("SIGTERM")
    expect((await second.exited).code).toBe(0)
  }, 60_000)
})

describe("no worker, no progress", () => {
  it("with the worker disabled an upload stays processing (job queued) and reads never fail it, however late", async () => {
    const clock = new ManualClock()
    const server = await start({ clock, server: { ...fast, ingestionWorker: false } })
    const kb = await newKnowledgebase(server)
    const source = accepted(await uploadForm(server, kb, [{ field: "file", file: { name: "wait.md", bytes: fixtureBytes("guide.md") } }]))
    clock.advance(24 * 3_600_000)
    expect((await readSource(server, kb, source.id)).status).toBe("processing")
    expect(await jobOf(server, source.id)).toMatchObject({ state: "queued", attempts: 0 })
    expectError(await server.request("GET", `/knowledgebases/${kb}/sources/${source.id}x`), 404, "not_found")
  })
})
