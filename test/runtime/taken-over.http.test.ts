/**
 * An execution taken over while it still runs: its instance missed its heartbeats (a stall past
 * the lease), so another instance's sweep finished it `failed` and gave its credit back. When the
 * turn then ends on its own instance, nothing more is recorded: no second credit back, no reply
 * stored, the record left as recovery wrote it.
 */
import { Effect } from "effect"
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenAi, type FakeResponse, startFakeOpenAi } from "../support/fake-openai.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { abandonedByServer } from "../../server/runtime/runs/reasons.js"
import { RunService } from "../../server/runtime/runs/service.js"
import { createAgent } from "./support.js"
import { eventually } from "../support/timing.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

let fake: FakeOpenAi
let answer: FakeResponse
let server: TestServer
let agent: string
beforeAll(async () => {
  fake = await startFakeOpenAi(() => answer)
  // No heartbeat during a test (a minute apart): the lease made to run out stays run out until the sweep.
  server = await startTestServer({
    server: { model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 }, instances: { heartbeatMs: 60_000 } }
  })
  agent = await createAgent(server, { model: "fake-model" })
})
afterAll(async () => {
  await server.stop()
  await fake.close()
})

const credits = async () => (await organizationOf(server)).creditsRemaining
const running = () =>
  server.admin(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (db) => db<{ id: string; conversation_id: string }>`
    SELECT id, conversation_id FROM executions WHERE status = 'running'`)))
/** Another process's sweep, after this server's lease was made to run out (as if it had stalled). */
const sweepAsIfStalled = () =>
  server.admin(
    Effect.gen(function* () {
      const db = yield* SqlClient.SqlClient
      yield* Effect.orDie(db`UPDATE service_instances SET alive_until = 0`.pipe(writing(writesEveryTable)))
      return yield* Effect.flatMap(RunService, (runs) => runs.recoverAbandoned("sweep"))
    })
  )

describe("an execution taken over by another instance's recovery", () => {
  for (const [ending, response] of [
    ["fails", { headersDelayMs: 1_500, status: 500, error: "upstream broke" }],
    ["succeeds", { headersDelayMs: 1_500, parts: [{ kind: "text", text: "late answer" }] }]
  ] as const) {
    it(`and then ${ending} on its own instance: the credit comes back once, nothing more is recorded`, async () => {
      answer = response
      await setCredits(server, 10)
      const seen = fake.requests.length
      const turn = server.request("POST", `/agents/${agent}/conversation`, { body: { message: "slow one" } })
      await eventually(async () => fake.requests.length > seen && (await running()).length === 1)
      const [execution] = await running()
      expect(await credits()).toBe(9)

      expect(await sweepAsIfStalled()).toBe(1)
      expect(await credits()).toBe(10)

      await turn
      const read = await server.request("GET", `/executions/${execution!.id}`)
      expect(read.body.execution).toMatchObject({ status: "failed", creditsCharged: 0, error: abandonedByServer })
      expect(await credits()).toBe(10)
      const messages = await server.request("GET", `/conversations/${execution!.conversation_id}/messages`)
      expect(messages.body.messages.map((m: { role: string }) => m.role)).toEqual(["user"])
    })
  }
})
