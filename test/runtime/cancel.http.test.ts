/**
 * `POST /executions/{id}/cancel` against a fake OpenAI-compatible provider holding its stream open:
 * a running turn stops (the provider's connection closes), its caller gets 409 `run_cancelled` (or,
 * streamed, a final `event: error` with that code), the execution is `cancelled` and nothing is
 * charged; a finished execution is answered unchanged; an unknown one is 404.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { expectError } from "../support/fixtures.js"
import type { FakeOpenAi, FakeResponse } from "../support/fake-openai.js"
import type { TestServer } from "../support/server.js"
import { organizationOf } from "../support/knowledge.js"
import { createAgent, fakeModelSuite, openStream } from "./support.js"
import { eventually } from "../support/timing.js"

let fake: FakeOpenAi
let server: TestServer
let agent: string
const suite = fakeModelSuite({ model: { defaultModel: "fake-model", maxAttempts: 2 } }, async (started) => {
  ;({ fake, server } = started)
  agent = await createAgent(server, { model: "fake-model" })
})

const credits = async () => (await organizationOf(server)).creditsRemaining
const hanging = (): FakeResponse => ({ parts: [{ kind: "text", text: "partial" }, { kind: "hang" }] })
/** The one execution left `running`. */
const runningExecution = () =>
  server.admin(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: string }>`SELECT id FROM executions WHERE status = 'running'`).pipe(
      Effect.map((rows) => {
        expect(rows).toHaveLength(1)
        return rows[0]!.id
      }),
      Effect.orDie
    )
  )
const cancel = (id: string) => server.request("POST", `/executions/${id}/cancel`)

describe("cancelling a running execution", () => {
  it("stops a streamed turn: a final error event run_cancelled, the execution cancelled, nothing charged", async () => {
    suite.answer = hanging
    const before = await credits()
    const streamed = await openStream(server, `/agents/${agent}/conversation`, { message: "go on", stream: true })
    const start = await streamed.next()
    expect(await streamed.next()).toEqual({ event: "delta", data: { text: "partial" } })
    const executionId = start!.data.executionId as string
    const aborted = fake.nextAbort()
    const cancelled = await cancel(executionId)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ ok: true, execution: { id: executionId, status: "cancelled", creditsCharged: 0 } })
    await aborted
    const rest = (await streamed.all()).filter((event) => event.event !== "comment")
    expect(rest).toEqual([{ event: "error", data: { error: { code: "run_cancelled", message: expect.any(String) } } }])
    expect(await credits()).toBe(before)
    const messages = await server.request("GET", `/conversations/${start!.data.conversation_id}/messages`)
    expect(messages.body.messages.map((m: { role: string; text: string }) => [m.role, m.text])).toEqual([
      ["user", "go on"],
      ["assistant", "partial"]
    ])
  })

  it("answers a non-streamed caller 409 run_cancelled", async () => {
    suite.answer = hanging
    const before = await credits()
    const seen = fake.requests.length
    const call = server.request("POST", `/agents/${agent}/conversation`, { body: { message: "wait for it" } })
    await eventually(async () => fake.requests.length > seen)
    const executionId = await runningExecution()
    const cancelled = await cancel(executionId)
    expect(cancelled.body.execution).toMatchObject({ status: "cancelled", creditsCharged: 0 })
    expectError(await call, 409, "run_cancelled")
    expect(await credits()).toBe(before)
  })

  it("stops a running Flow run too: 409 run_cancelled, the execution cancelled with its steps so far, nothing charged", async () => {
    suite.answer = hanging
    const created = await server.request("POST", "/flows", {
      body: {
        name: "Cancelled flow",
        questions: [{ label: "Topic", type: "text", required: true }],
        steps: [
          { type: "template", name: "framed", template: "About {{topic}}" },
          { type: "prompt", name: "written", template: "{{framed}}", model: "fake-model" }
        ]
      }
    })
    const flow = created.body.flow.id as string
    expect((await server.request("POST", `/flows/${flow}/publish`)).status).toBe(200)
    const before = await credits()
    const seen = fake.requests.length
    const call = server.request("POST", `/flows/${flow}/run`, { body: { inputs: { topic: "chairs" } } })
    await eventually(async () => fake.requests.length > seen)
    const executionId = await runningExecution()
    const aborted = fake.nextAbort()
    const cancelled = await cancel(executionId)
    expect(cancelled.body.execution).toMatchObject({ kind: "flow", status: "cancelled", creditsCharged: 0 })
    expect(cancelled.body.execution.steps.map((step: { name: string }) => step.name)).toContain("framed")
    await aborted
    expectError(await call, 409, "run_cancelled")
    expect(await credits()).toBe(before)
  })

  it("answers a finished execution unchanged, and an unknown one 404", async () => {
    const done = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "hi" } })
    const before = (await server.request("GET", `/executions/${done.body.executionId}`)).body.execution
    const answered = await cancel(done.body.executionId)
    expect(answered.status).toBe(200)
    expect(answered.body).toEqual({ ok: true, execution: before })
    expectError(await cancel("00000000-0000-4000-8000-000000000000"), 404, "not_found")
  })

  it("admits any :execute scope, and no other", async () => {
    const done = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "hi" } })
    const flowsExecutor = await server.createKey({ name: "flows executor", scopes: ["flows:execute"] })
    const reader = await server.createKey({ name: "reader", scopes: ["agents:read"] })
    const path = `/executions/${done.body.executionId}/cancel`
    expect((await server.request("POST", path, { key: flowsExecutor })).status).toBe(200)
    expectError(await server.request("POST", path, { key: reader }), 403, "insufficient_scope")
  })
})
