/**
 * A closing server and the runs that outlive their connection (issue 25): it waits `drainMs` for its
 * detached runs, then stops them, recorded `failed` with nothing charged and their final `error`
 * event stored; seen through a restart on the same data directory (database).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { stoppedByServer } from "../../server/runtime/runs/reasons.js"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fake-openai.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { dropTestDatabase, startTestServer } from "../support/server.js"
import { eventually } from "../support/timing.js"
import { createAgent } from "./support.js"

let fake: FakeOpenAi
beforeAll(async () => {
  fake = await startFakeOpenAi(() => ({ parts: [{ kind: "text", text: "partial" }, { kind: "hang" }] }))
})
afterAll(async () => {
  await fake?.close()
})

it("waits drainMs for its detached runs, then stops them: failed, nothing charged, their final error event stored", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-drain-"))
  const options = { model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 }, runs: { drainMs: 300 } }
  const first = await startTestServer({ dataDir, server: options })
  const agent = await createAgent(first, { model: "fake-model" })
  await setCredits(first, 10)
  const detached = await first.request("POST", `/agents/${agent}/conversation`, { body: { message: "forever", detach: true } })
  expect(detached.status).toBe(202)
  await eventually(async () => fake.requests.length > 0)
  await first.stop()
  const second = await startTestServer({ dataDir, key: first.key, server: options })
  try {
    const { executionId } = detached.body
    expect((await second.request("GET", `/executions/${executionId}`)).body.execution).toMatchObject({ status: "failed", creditsCharged: 0, error: stoppedByServer })
    expect((await organizationOf(second)).creditsRemaining).toBe(10)
    const response = await second.request("GET", `/executions/${executionId}/events`)
    expect(response.text).toContain("event: error")
    expect(response.text).toContain(stoppedByServer)
  } finally {
    await second.stop()
    await dropTestDatabase(dataDir)
    rmSync(dataDir, { recursive: true, force: true })
  }
}, 60_000)
