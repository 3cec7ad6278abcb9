/**
 * Streams that resume by themselves (issue 25), against a real server through a TCP proxy that
 * drops the connection mid-reply: the SDK's stream iterator reconnects through
 * `GET /executions/{id}/events` with `Last-Event-ID` and yields each event exactly once, typed,
 * ending with the whole answer; `svc chat` prints the whole reply once; the SDK follows a detached
 * run with `executionEvents`. The run itself is charged once and its reply stored once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type StreamEvent, Svc } from "../../sdk/index.js"
import { type CuttingProxy, startCuttingProxy } from "../support/cutting-proxy.js"
import { type FakeOpenAi, type FakeResponse, say, startFakeOpenAi } from "../support/fake-openai.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { svc as runSvc } from "../cli/helpers.js"
import { createAgent } from "./support.js"

let fake: FakeOpenAi
let answer: () => FakeResponse = () => say("ok")
let server: TestServer
let proxy: CuttingProxy
let client: Svc
let agent: string
beforeAll(async () => {
  fake = await startFakeOpenAi(() => answer())
  server = await startTestServer({
    server: { model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 }, runs: { eventPollMs: 50 } }
  })
  proxy = await startCuttingProxy(server.baseUrl)
  client = new Svc({ baseUrl: proxy.baseUrl, apiKey: server.key })
  agent = await createAgent(server, { model: "fake-model" })
})
afterAll(async () => {
  await client?.close()
  await proxy?.close()
  await server?.stop()
  await fake?.close()
})
beforeEach(async () => {
  server.clock.advance(60_000)
  await setCredits(server, 1_000)
})

/** A reply in two parts with a pause between them: the connection is cut after the first. */
const slowReply = (): FakeResponse => ({ parts: [{ kind: "text", text: "first " }, { kind: "wait", ms: 600 }, { kind: "text", text: "second" }] })
const credits = async () => (await organizationOf(server)).creditsRemaining
const messagesOf = async (conversationId: string) =>
  (await server.request("GET", `/conversations/${conversationId}/messages`)).body.messages.map((m: any) => [m.role, m.text])
/** The requests the proxy forwarded since `from`: method and path without the query, and their Last-Event-ID. */
const forwardedSince = (from: number) =>
  proxy.requests.slice(from).map((request) => [request.line.split(" ").slice(0, 2).join(" ").replace(/\/[0-9a-f-]{36}/g, "/ID"), request.headers["last-event-id"] ?? null])

describe("the SDK's stream iterator", () => {
  it("reconnects with Last-Event-ID when the connection drops mid-reply: each event once, typed, ending with the whole answer", async () => {
    answer = slowReply
    const before = await credits()
    const seen = proxy.requests.length
    const cuts = proxy.cuts()
    proxy.cutAfter('"first "')
    const events: Array<StreamEvent<{ reply: string; conversation_id: string; executionId: string }>> = []
    for await (const event of client.runs.agentConversationStream(agent, { message: "tell me" })) events.push(event)
    expect(proxy.cuts()).toBe(cuts + 1)
    expect(events.map((event) => [event.id, event.type])).toEqual([
      [1, "start"],
      [2, "delta"],
      [3, "delta"],
      [4, "done"]
    ])
    const start = events[0] as Extract<(typeof events)[number], { type: "start" }>
    const done = events[3] as Extract<(typeof events)[number], { type: "done" }>
    expect(events.flatMap((event) => (event.type === "delta" ? [event.text] : [])).join("")).toBe("first second")
    expect(done.answer).toEqual({ reply: "first second", conversation_id: start.conversation_id, executionId: start.executionId })
    expect(forwardedSince(seen)).toEqual([
      ["POST /api/v1/agents/ID/conversation", null],
      ["GET /api/v1/executions/ID/events", "2"]
    ])
    expect((await client.runs.getExecution(start.executionId)).execution).toMatchObject({ status: "succeeded", creditsCharged: 1 })
    expect(await credits()).toBe(before - 1)
    expect(await messagesOf(start.conversation_id!)).toEqual([
      ["user", "tell me"],
      ["assistant", "first second"]
    ])
  })

  it("follows a detached run with executionEvents, from the start or after an id", async () => {
    answer = () => say("all ", "done")
    const detached = await client.runs.agentConversationDetached(agent, { message: "later" })
    expect(detached).toEqual({ executionId: expect.any(String), conversation_id: expect.any(String) })
    const events: Array<StreamEvent<unknown>> = []
    for await (const event of client.runs.executionEvents(detached.executionId)) events.push(event)
    expect(events.map((event) => event.type)).toEqual(["start", "delta", "delta", "done"])
    expect(events[3]).toEqual({
      type: "done",
      id: 4,
      answer: { reply: "all done", conversation_id: detached.conversation_id, executionId: detached.executionId }
    })
    const later: Array<StreamEvent<unknown>> = []
    for await (const event of client.runs.executionEvents(detached.executionId, {}, { headers: { "last-event-id": "2" } })) later.push(event)
    expect(later.map((event) => event.id)).toEqual([3, 4])
  })
})

describe("svc chat", () => {
  it("reconnects when the connection drops mid-reply: the reply is printed complete and once", async () => {
    answer = slowReply
    const seen = proxy.requests.length
    proxy.cutAfter('"first "')
    const run = await runSvc(["chat", agent, "--message", "tell me again", "--json"], undefined, { SVC_BASE_URL: proxy.baseUrl, SVC_API_KEY: server.key })
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, any>)
    expect(lines.map((line) => line.type)).toEqual(["start", "delta", "delta", "done"])
    expect(lines.filter((line) => line.type === "delta").map((line) => line.text).join("")).toBe("first second")
    expect(lines[3]!.answer.reply).toBe("first second")
    expect(forwardedSince(seen).map(([request]) => request)).toEqual(["POST /api/v1/agents/ID/conversation", "GET /api/v1/executions/ID/events"])
    expect(await messagesOf(lines[3]!.answer.conversation_id)).toEqual([
      ["user", "tell me again"],
      ["assistant", "first second"]
    ])
  })

  it("prints the reply once as plain text after a cut", async () => {
    answer = slowReply
    proxy.cutAfter('"first "')
    const run = await runSvc(["chat", agent, "--message", "plainly"], undefined, { SVC_BASE_URL: proxy.baseUrl, SVC_API_KEY: server.key })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toBe("first second\n")
  })
})
