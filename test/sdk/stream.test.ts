/**
 * The SDK's streamed replies against a real server: the builtin model's events in order ending with
 * the answer the plain call gives, a refusal before the stream as its typed error, an `error` event
 * (a cancelled run, through a fake OpenAI-compatible provider holding its stream open) as the typed
 * error with the request id, and an abort that stops the stream and the provider call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NotFoundError, RunCancelledError, type StreamEvent, Svc, SvcError } from "../../sdk/index.js"
import { type FakeOpenAi, type FakeResponse, say, startFakeOpenAi } from "../support/fake-openai.js"
import { insertKnowledgebases } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { setCredits } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { createAgent } from "../runtime/support.js"

let fake: FakeOpenAi
let answer: () => FakeResponse = () => say("ok")
let server: TestServer
let svc: Svc
let handbookAgent: string
let fakeAgent: string
const term = "wombatquillion"

beforeAll(async () => {
  fake = await startFakeOpenAi(() => answer())
  server = await startTestServer({ server: { model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 } } })
  svc = new Svc({ baseUrl: server.baseUrl, apiKey: server.key })
  await setCredits(server, 1_000)
  const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Handbook" })
  await readySource(server, kb!.id, { name: "Refund handbook", markdown: true, text: `# Refunds\n\nA ${term} refund is paid within thirty days.\n` })
  handbookAgent = await createAgent(server, { model: "builtin", knowledgebaseIds: [kb!.id] })
  fakeAgent = await createAgent(server, { name: "Slow", model: "fake-model" })
})
afterAll(async () => {
  await svc?.close()
  await server?.stop()
  await fake?.close()
})

const hanging = (): FakeResponse => ({ parts: [{ kind: "text", text: "partial" }, { kind: "hang" }] })

describe("agentConversationStream", () => {
  it("yields start, tool, deltas in order and ends with done: the answer the plain call gives", async () => {
    const events: Array<StreamEvent<unknown>> = []
    for await (const event of svc.runs.agentConversationStream(handbookAgent, { message: `${term} refund` })) events.push(event)
    const types = events.map((event) => event.type)
    expect(types[0]).toBe("start")
    expect(types.at(-1)).toBe("done")
    expect(types.filter((type) => type === "done")).toHaveLength(1)
    expect(types.slice(1, -1).every((type) => type === "tool" || type === "delta")).toBe(true)
    expect(types.indexOf("tool")).toBeLessThan(types.indexOf("delta"))
    const start = events[0] as Extract<StreamEvent<unknown>, { type: "start" }>
    const done = events.at(-1) as Extract<StreamEvent<Awaited<ReturnType<Svc["runs"]["agentConversation"]>>>, { type: "done" }>
    expect(done.answer).toEqual({ reply: expect.any(String), conversation_id: start.conversation_id, executionId: start.executionId })
    const text = events.flatMap((event) => (event.type === "delta" ? [event.text] : [])).join("")
    expect(text).toBe(done.answer.reply)
    const plain = await svc.runs.agentConversation(handbookAgent, { message: `${term} refund`, conversation_id: done.answer.conversation_id })
    expect(Object.keys(done.answer).sort()).toEqual(Object.keys(plain).sort())
    expect(done.answer.reply).toBe(plain.reply)
  })

  it("finalAnswer() resolves with the done answer; the draft run streams too", async () => {
    const answered = await svc.runs.agentDraftRunStream(handbookAgent, { message: `${term} refund` }).finalAnswer()
    expect(answered.reply).toContain("thirty days")
    const execution = await svc.runs.getExecution(answered.executionId)
    expect(execution.execution).toMatchObject({ draft: true, status: "succeeded" })
  })

  it("throws the typed error of a refusal answered before the stream", async () => {
    const error = await svc.runs.agentConversationStream("00000000-0000-4000-8000-000000000000", { message: "hi" }).finalAnswer().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error).toMatchObject({ status: 404, code: "not_found", requestId: expect.stringMatching(/^req_/) })
  })

  it("throws the typed error of an error event, with the request id", async () => {
    answer = hanging
    const seen: Array<string> = []
    let executionId = ""
    const error = await (async () => {
      for await (const event of svc.runs.agentConversationStream(fakeAgent, { message: "go on" })) {
        seen.push(event.type)
        if (event.type === "start") executionId = event.executionId
        if (event.type === "delta") await svc.runs.cancelExecution(executionId)
      }
    })().catch((e: unknown) => e)
    expect(seen).toEqual(["start", "delta"])
    expect(error).toBeInstanceOf(RunCancelledError)
    expect(error).toMatchObject({ status: 409, code: "run_cancelled", requestId: expect.stringMatching(/^req_/) })
    expect((await svc.runs.getExecution(executionId)).execution.status).toBe("cancelled")
  })

  it("stops when its signal aborts: the iterator throws the abort reason and the provider call closes", async () => {
    answer = hanging
    const controller = new AbortController()
    const aborted = fake.nextAbort()
    let executionId = ""
    const error = await (async () => {
      for await (const event of svc.runs.agentConversationStream(fakeAgent, { message: "long" }, { signal: controller.signal })) {
        if (event.type === "start") executionId = event.executionId
        if (event.type === "delta") controller.abort(new Error("stop now"))
      }
    })().catch((e: unknown) => e)
    expect(error).toEqual(new Error("stop now"))
    expect(error).not.toBeInstanceOf(SvcError)
    await aborted
    await expect.poll(async () => (await svc.runs.getExecution(executionId)).execution.status).toBe("cancelled")
  })

  it("closes the stream when the loop is left early: the run is cancelled", async () => {
    answer = hanging
    const aborted = fake.nextAbort()
    let executionId = ""
    for await (const event of svc.runs.agentConversationStream(fakeAgent, { message: "leave early" })) {
      if (event.type === "start") executionId = event.executionId
      if (event.type === "delta") break
    }
    await aborted
    await expect.poll(async () => (await svc.runs.getExecution(executionId)).execution.status).toBe("cancelled")
  })
})
