/**
 * Agent runs over HTTP against a fake OpenAI-compatible provider on a real socket: history sent on
 * the second turn, a failing provider (502 `run_failed`, execution `failed`, nothing charged),
 * streaming order, a client that disconnects mid-stream (the run goes on to its end, charged once,
 * issue 25), and concurrent turns on
 * one conversation kept in order.
 */
import { describe, expect, it } from "vitest"
import { expectError } from "../support/fixtures.js"
import { callTool, type FakeOpenAi, say, type SeenRequest } from "../support/fake-openai.js"
import type { TestServer } from "../support/server.js"
import { insertKnowledgebases } from "../support/fixtures.js"
import { organizationOf } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { count, createAgent, fakeModelSuite, openStream } from "./support.js"
import { eventually } from "../support/timing.js"

let fake: FakeOpenAi
let server: TestServer
let agent: string
const suite = fakeModelSuite({ model: { defaultModel: "fake-model", maxAttempts: 2 } }, async (started) => {
  ;({ fake, server } = started)
  agent = await createAgent(server, { instructions: "You are terse.", model: "fake-model" })
})

const credits = async () => (await organizationOf(server)).creditsRemaining
const talk = (body: unknown) => server.request("POST", `/agents/${agent}/conversation`, { body })
const lastUser = (request: SeenRequest): string => {
  const messages = request.body.messages as Array<{ role: string; content: string }>
  return messages.filter((m) => m.role === "user").at(-1)!.content
}

describe("history", () => {
  it("the second turn sends the first turn's messages to the model", async () => {
    suite.answer = (request) => say(`echo ${lastUser(request)}`)
    const first = await talk({ message: "My name is Ada." })
    expect(first.body.reply).toBe("echo My name is Ada.")
    const seen = fake.requests.length
    const second = await talk({ message: "What is my name?", conversation_id: first.body.conversation_id })
    expect(second.status).toBe(200)
    const sent = fake.requests[seen]!.body.messages.map((m: any) => [m.role, m.content])
    expect(sent).toEqual([
      ["system", "You are terse."],
      ["user", "My name is Ada."],
      ["assistant", "echo My name is Ada."],
      ["user", "What is my name?"]
    ])
    expect(fake.requests[seen]!.body.model).toBe("fake-model")
  })
})

describe("the Knowledgebase search tool", () => {
  it("is offered to the model, answers passages with citations, and is recorded and streamed as a tool event", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Tooling" })
    await readySource(server, kb!.id, { name: "Shipping guide", markdown: true, text: "# Shipping\n\nParcels to Zanzibarra ship every Tuesday.\n" })
    const searcher = await createAgent(server, { name: "Searcher", model: "fake-model", knowledgebaseIds: [kb!.id] })
    suite.answer = (request) =>
      request.body.messages.some((m: any) => m.role === "tool") ? say("Tuesdays, per the Shipping guide.") : callTool("search_knowledgebases", { query: "Zanzibarra" })
    const before = await credits()
    const seen = fake.requests.length
    const streamed = await openStream(server, `/agents/${searcher}/conversation`, { message: "When do parcels to Zanzibarra ship?", stream: true })
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(events.map((e) => e.event)).toEqual(["start", "tool", "delta", "done"])
    expect(events[1]!.data).toEqual({ name: "search_knowledgebases" })
    const offered = fake.requests[seen]!.body.tools.map((tool: any) => tool.function.name)
    expect(offered).toEqual(["search_knowledgebases"])
    const toolMessage = fake.requests[seen + 1]!.body.messages.find((m: any) => m.role === "tool")
    const passages = JSON.parse(toolMessage.content).passages
    expect(passages[0]).toMatchObject({ source: "Shipping guide", text: expect.stringContaining("Tuesday") })
    const execution = (await server.request("GET", `/executions/${events[0]!.data.executionId}`)).body.execution
    expect(execution.toolsCalled).toEqual([{ name: "search_knowledgebases", arguments: { query: "Zanzibarra" } }])
    expect(execution.steps.map((step: any) => step.type)).toEqual(["model", "tool", "model"])
    // One credit for the run; the tool's document search costs nothing of its own.
    expect(await credits()).toBe(before - 1)
  })
})

describe("a failing provider", () => {
  it("is 502 run_failed, the execution failed, nothing charged and no reply stored", async () => {
    suite.answer = () => ({ status: 500, error: "upstream exploded" })
    const before = await credits()
    const executions = await count(server, "SELECT count(*) AS n FROM executions")
    expectError(await talk({ message: "hello?" }), 502, "run_failed")
    expect(await credits()).toBe(before)
    expect(await count(server, "SELECT count(*) AS n FROM executions")).toBe(executions + 1)
    const failed = await count(server, "SELECT count(*) AS n FROM executions WHERE status = 'failed' AND credits_charged = 0 AND error IS NOT NULL")
    expect(failed).toBeGreaterThanOrEqual(1)
    expect(await count(server, "SELECT count(*) AS n FROM executions WHERE status = 'running'")).toBe(0)
    expect(await count(server, "SELECT count(*) AS n FROM messages WHERE role = 'assistant' AND text = ''")).toBe(0)
  })

  it("streamed, ends with one event: error carrying the envelope", async () => {
    suite.answer = () => ({ status: 503, error: "busy" })
    const before = await credits()
    const streamed = await openStream(server, `/agents/${agent}/conversation`, { message: "hi", stream: true })
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(events.map((e) => e.event)).toEqual(["start", "error"])
    expect(events[1]!.data).toEqual({ error: { code: "run_failed", message: expect.any(String) } })
    const execution = await server.request("GET", `/executions/${events[0]!.data.executionId}`)
    expect(execution.body.execution).toMatchObject({ status: "failed", creditsCharged: 0 })
    expect(await credits()).toBe(before)
  })
})

describe("streaming", () => {
  it("sends start before the model answers, then deltas in order and one done", async () => {
    suite.answer = () => ({ headersDelayMs: 300, parts: [{ kind: "text", text: "Hel" }, { kind: "text", text: "lo" }] })
    const streamed = await openStream(server, `/agents/${agent}/conversation`, { message: "greet me", stream: true })
    const firstAt = Date.now()
    const start = await streamed.next()
    expect(start!.event).toBe("start")
    expect(Date.now() - firstAt).toBeLessThan(250)
    const rest = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(rest.map((e) => e.event)).toEqual(["delta", "delta", "done"])
    expect(rest.slice(0, 2).map((e) => e.data)).toEqual([{ text: "Hel" }, { text: "lo" }])
    expect(rest[2]!.data).toEqual({ reply: "Hello", conversation_id: start!.data.conversation_id, executionId: start!.data.executionId })
  })

  it("sends a keep-alive comment while the model is silent", async () => {
    suite.answer = () => ({ headersDelayMs: 450, parts: [{ kind: "text", text: "late" }] })
    const streamed = await openStream(server, `/agents/${agent}/conversation`, { message: "take your time", stream: true })
    const events = await streamed.all()
    const names = events.map((e) => e.event)
    expect(names[0]).toBe("start")
    expect(names.at(-1)).toBe("done")
    const comments = events.filter((e) => e.event === "comment")
    expect(comments.length).toBeGreaterThanOrEqual(2)
    expect(comments.every((e) => e.data === "keep-alive")).toBe(true)
    expect(names.indexOf("comment")).toBeLessThan(names.indexOf("delta"))
  })

  it("a client that disconnects mid-stream leaves the run going (issue 25): it finishes succeeded, charged once, its whole reply stored", async () => {
    suite.answer = () => ({ parts: [{ kind: "text", text: "partial answer" }, { kind: "wait", ms: 300 }, { kind: "text", text: " and the rest" }] })
    const before = await credits()
    const aborted = fake.aborted.length
    const controller = new AbortController()
    const streamed = await openStream(server, `/agents/${agent}/conversation`, { message: "tell me a long story", stream: true }, controller.signal)
    const start = await streamed.next()
    expect(start!.event).toBe("start")
    const delta = await streamed.next()
    expect(delta).toEqual({ event: "delta", data: { text: "partial answer" } })
    controller.abort()
    const executionId = start!.data.executionId as string
    await eventually(async () => (await server.request("GET", `/executions/${executionId}`)).body.execution.status !== "running")
    const execution = (await server.request("GET", `/executions/${executionId}`)).body.execution
    expect(execution).toMatchObject({ status: "succeeded", creditsCharged: 1, error: null })
    expect(await credits()).toBe(before - 1)
    expect(fake.aborted.length).toBe(aborted)
    const messages = await server.request("GET", `/conversations/${start!.data.conversation_id}/messages`)
    expect(messages.body.messages.map((m: any) => [m.role, m.text])).toEqual([
      ["user", "tell me a long story"],
      ["assistant", "partial answer and the rest"]
    ])
  })
})

describe("a reply returned whole", () => {
  it("asks the model for one complete answer, and for a stream when the reply is streamed", async () => {
    suite.answer = () => say("Within ", "30 days.")
    const seen = fake.requests.length
    const whole = await talk({ message: "Returns?" })
    expect(whole.status).toBe(200)
    expect(whole.body.reply).toBe("Within 30 days.")
    const streamed = await openStream(server, `/agents/${agent}/conversation`, { message: "Returns?", stream: true })
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(events.filter((e) => e.event === "delta").map((e) => e.data.text)).toEqual(["Within ", "30 days."])
    expect(fake.requests.slice(seen).map((request) => request.body.stream)).toEqual([false, true])
  })

  it("runs the tool loop on whole answers", async () => {
    const seen = fake.requests.length
    suite.answer = (_request, n) => (n === seen ? callTool("no_such_tool", { q: "x" }) : say("done after the tool"))
    const reply = await talk({ message: "Use a tool" })
    expect(reply.status).toBe(200)
    expect(reply.body.reply).toBe("done after the tool")
    const followUp = fake.requests[seen + 1]!.body.messages as Array<{ role: string; content: string | null; tool_call_id?: string }>
    expect(followUp.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_no_such_tool", content: 'Error: there is no tool named "no_such_tool".' })
    expect(fake.requests.slice(seen).map((request) => request.body.stream)).toEqual([false, false])
  })

  it("an answer cut short is 502 run_failed, the execution failed and nothing charged", async () => {
    suite.answer = () => ({ parts: [{ kind: "text", text: "Within 30 days" }, { kind: "end" }] })
    const before = await credits()
    const failed = await talk({ message: "Returns?" })
    expectError(failed, 502, "run_failed")
    expect(failed.body.error.message).toMatch(/^The model provider failed \(.*JSON.*\)\.$/)
    expect(await credits()).toBe(before)
    const failedExecutions = "SELECT count(*) AS n FROM executions WHERE status = 'failed' AND credits_charged = 0 AND error = ?"
    expect(await count(server, failedExecutions, [failed.body.error.message])).toBe(1)
  })
})

describe("concurrent turns on one conversation", () => {
  it("run one at a time: every message kept, in order, each turn seeing the ones before", async () => {
    suite.answer = (request) => ({ parts: [{ kind: "wait", ms: 30 }, { kind: "text", text: `re: ${lastUser(request)}` }] })
    const first = await talk({ message: "turn 0" })
    const conversation = first.body.conversation_id as string
    const seen = fake.requests.length
    const turns = await Promise.all(
      [1, 2, 3, 4].map((i) => talk({ message: `turn ${i}`, conversation_id: conversation }))
    )
    expect(turns.map((t) => t.status)).toEqual([200, 200, 200, 200])
    const messages = (await server.request("GET", `/conversations/${conversation}/messages`)).body.messages as Array<any>
    expect(messages).toHaveLength(10)
    for (let i = 0; i < messages.length; i += 2) {
      expect(messages[i].role).toBe("user")
      expect(messages[i + 1]).toMatchObject({ role: "assistant", text: `re: ${messages[i].text}`, executionId: messages[i].executionId })
    }
    const historyLengths = fake.requests.slice(seen).map((r) => r.body.messages.length).sort((a: number, b: number) => a - b)
    // system + 2 per earlier turn + the new message: 4, 6, 8, 10.
    expect(historyLengths).toEqual([4, 6, 8, 10])
  })
})
