/**
 * Runs people can follow (issue 25), over HTTP on a real server against a fake OpenAI-compatible
 * provider: every streamed event has an id; `GET /executions/{id}/events` replays a run from the
 * start or after `Last-Event-ID` (each later event exactly once) and follows a running one live; a
 * streamed run whose client goes away runs to its end and is charged once; `detach: true` answers
 * 202 and the run finishes alone (charged once), or is cancelled, or fails charging nothing; other
 * organizations' ids are 404; events are swept 24 hours after they were recorded.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"
import { expectError } from "../support/fixtures.js"
import { type FakeOpenAi, type FakeResponse, say } from "../support/fake-openai.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import type { TestServer } from "../support/server.js"
import { eventually } from "../support/timing.js"
import { createAgent, fakeModelSuite } from "./support.js"

let fake: FakeOpenAi
let server: TestServer
let agent: string
const suite = fakeModelSuite(
  {
    model: { defaultModel: "fake-model", maxAttempts: 1 },
    server: { runs: { keepAliveMs: 100, eventPollMs: 50, finalEventGraceMs: 300, drainMs: 2_000 }, instances: { heartbeatMs: 100 } }
  },
  async (started) => {
    ;({ fake, server } = started)
    agent = await createAgent(server, { model: "fake-model" })
  }
)

/** One SSE event with its id (null for none). */
interface IdEvent {
  readonly id: number | null
  readonly event: string
  readonly data: any
}

/** Parses complete SSE frames, keep-alive comments left out. */
const framesOf = (buffer: string): { events: Array<IdEvent>; rest: string } => {
  const events: Array<IdEvent> = []
  let rest = buffer
  for (let end = rest.indexOf("\n\n"); end !== -1; end = rest.indexOf("\n\n")) {
    const frame = rest.slice(0, end)
    rest = rest.slice(end + 2)
    if (frame.startsWith(":")) continue
    const lines = frame.split("\n")
    const id = lines.find((line) => line.startsWith("id: "))?.slice(4)
    const event = lines.find((line) => line.startsWith("event: "))!.slice(7)
    const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n")
    events.push({ id: id === undefined ? null : Number(id), event, data: JSON.parse(data) })
  }
  return { events, rest }
}

/** A request answering SSE: its status and an iterator over its events (with ids). */
const sse = async (method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; key?: string; signal?: AbortSignal } = {}) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.key ?? server.key}`,
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const pending: Array<IdEvent> = []
  const next = async (): Promise<IdEvent | null> => {
    for (;;) {
      if (pending.length > 0) return pending.shift()!
      const chunk = await reader.read()
      if (chunk.done) return null
      buffer += decoder.decode(chunk.value, { stream: true })
      const parsed = framesOf(buffer)
      buffer = parsed.rest
      pending.push(...parsed.events)
    }
  }
  const all = async () => {
    const events: Array<IdEvent> = []
    for (let event = await next(); event !== null; event = await next()) events.push(event)
    return events
  }
  return { response, next, all }
}

const credits = async () => (await organizationOf(server)).creditsRemaining
const executionOf = async (id: string) => (await server.request("GET", `/executions/${id}`)).body.execution
const finished = async (id: string) => {
  await eventually(async () => (await executionOf(id)).status !== "running")
  return executionOf(id)
}
const talk = (body: Record<string, unknown>) => sse("POST", `/agents/${agent}/conversation`, { body: { stream: true, ...body } })
const eventsOf = (id: string, options: { headers?: Record<string, string>; query?: string; key?: string } = {}) =>
  sse("GET", `/executions/${id}/events${options.query ?? ""}`, options)
const messagesOf = async (conversationId: string) =>
  (await server.request("GET", `/conversations/${conversationId}/messages`)).body.messages.map((m: any) => [m.role, m.text])
const countRows = (table: "executions" | "run_events") =>
  server.admin(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`)).pipe(
      Effect.map((rows) => Number(rows[0]!.n)),
      Effect.orDie
    )
  )
/** A reply sent in two parts with a pause between them, so a run can be followed or cut while it runs. */
const slowReply = (ms = 700): FakeResponse => ({ parts: [{ kind: "text", text: "first " }, { kind: "wait", ms }, { kind: "text", text: "second" }] })

describe("event ids", () => {
  it("every event of a streamed Agent turn, draft run and Flow run carries its position in the run as its id", async () => {
    suite.answer = () => say("Hello ", "world")
    const turn = await (await talk({ message: "hi" })).all()
    expect(turn.map((event) => [event.id, event.event])).toEqual([
      [1, "start"],
      [2, "delta"],
      [3, "delta"],
      [4, "done"]
    ])
    const draft = await (await sse("POST", `/agents/${agent}/draft/run`, { body: { message: "hi", stream: true } })).all()
    expect(draft.map((event) => [event.id, event.event])).toEqual([
      [1, "start"],
      [2, "delta"],
      [3, "delta"],
      [4, "done"]
    ])
    const created = await server.request("POST", "/flows", {
      body: { name: "Echo flow", questions: [], steps: [{ type: "prompt", name: "written", template: "{{message}}" }] }
    })
    expect(created.status).toBe(201)
    const flow = created.body.flow.id as string
    expect((await server.request("POST", `/flows/${flow}/publish`)).status).toBe(200)
    const flowRun = await (await sse("POST", `/flows/${flow}/run`, { body: { message: "hi", stream: true } })).all()
    expect(flowRun.map((event) => event.id)).toEqual(flowRun.map((_, index) => index + 1))
    expect(flowRun[0]!.event).toBe("start")
    expect(flowRun.at(-1)!.event).toBe("done")
  })

  it("a streamed run refused before it starts answers as before (402 JSON) and stores no event", async () => {
    await setCredits(server, 0)
    const storedBefore = await countRows("run_events")
    const refused = await talk({ message: "hi" })
    expect(refused.response.status).toBe(402)
    expect(await countRows("run_events")).toBe(storedBefore)
  })
})

describe("GET /executions/{id}/events", () => {
  it("replays a finished run from the start as it was streamed, and after Last-Event-ID (or ?after) each later event exactly once", async () => {
    suite.answer = () => say("one ", "two ", "three")
    const live = await (await talk({ message: "count" })).all()
    const executionId = live[0]!.data.executionId as string
    expect(live).toHaveLength(5)
    const replayed = await eventsOf(executionId)
    expect(replayed.response.status).toBe(200)
    expect(replayed.response.headers.get("content-type")).toContain("text/event-stream")
    expect(await replayed.all()).toEqual(live)
    expect(await (await eventsOf(executionId, { headers: { "last-event-id": "2" } })).all()).toEqual(live.slice(2))
    expect(await (await eventsOf(executionId, { query: "?after=3" })).all()).toEqual(live.slice(3))
    // The header wins over the query: EventSource resends it on each reconnect while its URL keeps its first `after`.
    expect(await (await eventsOf(executionId, { query: "?after=1", headers: { "last-event-id": "4" } })).all()).toEqual(live.slice(4))
    expect(await (await eventsOf(executionId, { headers: { "last-event-id": "5" } })).all()).toEqual([])
  })

  it("follows a running execution live to its done, the same events as its own stream", async () => {
    suite.answer = () => slowReply()
    const streamed = await talk({ message: "slowly" })
    const start = await streamed.next()
    expect(await streamed.next()).toMatchObject({ id: 2, event: "delta", data: { text: "first " } })
    const executionId = start!.data.executionId as string
    expect((await executionOf(executionId)).status).toBe("running")
    const follower = await eventsOf(executionId)
    const [followed, rest] = await Promise.all([follower.all(), streamed.all()])
    const live = [start!, { id: 2, event: "delta", data: { text: "first " } }, ...rest]
    expect(live.map((event) => event.event)).toEqual(["start", "delta", "delta", "done"])
    expect(followed).toEqual(live)
    expect(followed.at(-1)!.data).toEqual({ reply: "first second", conversation_id: start!.data.conversation_id, executionId })
  })

  it("a malformed Last-Event-ID or after is 400 invalid_request", async () => {
    const live = await (await talk({ message: "hi" })).all()
    const executionId = live[0]!.data.executionId as string
    const header = await server.request("GET", `/executions/${executionId}/events`, { headers: { "last-event-id": "two" } })
    expectError(header, 400, "invalid_request")
    const query = await server.request("GET", `/executions/${executionId}/events?after=-1`)
    expectError(query, 400, "invalid_request")
  })

  it("another organization's execution, an unknown one and a run answered whole are 404; another kind's scope is 403", async () => {
    const live = await (await talk({ message: "hi" })).all()
    const executionId = live[0]!.data.executionId as string
    const otherKey = await server.createOrganization("events-other")
    expectError(await server.request("GET", `/executions/${executionId}/events`, { key: otherKey }), 404, "not_found")
    expectError(await server.request("GET", "/executions/00000000-0000-4000-8000-000000000000/events"), 404, "not_found")
    const flowsOnly = await server.createKey({ name: "flows only", scopes: ["flows:execute"] })
    expectError(await server.request("GET", `/executions/${executionId}/events`, { key: flowsOnly }), 403, "insufficient_scope")
    const whole = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "whole" } })
    expect(whole.status).toBe(200)
    const notKept = await server.request("GET", `/executions/${whole.body.executionId}/events`)
    expectError(notKept, 404, "not_found")
    expect(notKept.body.error.message).toContain("streamed and detached")
  })
})

describe("a streamed run whose client goes away", () => {
  it("runs to its end, charged once, its reply stored once; a reconnect with Last-Event-ID gets each later event exactly once", async () => {
    suite.answer = () => slowReply()
    const before = await credits()
    const controller = new AbortController()
    const streamed = await sse("POST", `/agents/${agent}/conversation`, { body: { message: "cut me", stream: true }, signal: controller.signal })
    const start = await streamed.next()
    const first = await streamed.next()
    expect(first).toMatchObject({ id: 2, event: "delta" })
    controller.abort()
    const executionId = start!.data.executionId as string
    const resumed = await (await eventsOf(executionId, { headers: { "last-event-id": "2" } })).all()
    expect(resumed.map((event) => [event.id, event.event])).toEqual([
      [3, "delta"],
      [4, "done"]
    ])
    const reply = [first!, ...resumed].filter((event) => event.event === "delta").map((event) => event.data.text).join("")
    expect(reply).toBe("first second")
    expect(resumed[1]!.data).toEqual({ reply: "first second", conversation_id: start!.data.conversation_id, executionId })
    expect(await finished(executionId)).toMatchObject({ status: "succeeded", creditsCharged: 1, error: null })
    expect(await credits()).toBe(before - 1)
    expect(await messagesOf(start!.data.conversation_id)).toEqual([
      ["user", "cut me"],
      ["assistant", "first second"]
    ])
  })
})

describe("detach", () => {
  it("answers 202 with the execution and conversation; the run finishes alone, charged one credit, its events readable", async () => {
    suite.answer = () => slowReply(300)
    const before = await credits()
    const detached = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "in the background", detach: true } })
    expect(detached.status).toBe(202)
    expect(detached.body).toEqual({ executionId: expect.any(String), conversation_id: expect.any(String) })
    const { executionId, conversation_id } = detached.body
    expect(await finished(executionId)).toMatchObject({ status: "succeeded", creditsCharged: 1, conversationId: conversation_id })
    expect(await credits()).toBe(before - 1)
    expect(await messagesOf(conversation_id)).toEqual([
      ["user", "in the background"],
      ["assistant", "first second"]
    ])
    const events = await (await eventsOf(executionId)).all()
    expect(events.map((event) => [event.id, event.event])).toEqual([
      [1, "start"],
      [2, "delta"],
      [3, "delta"],
      [4, "done"]
    ])
    expect(events[3]!.data).toEqual({ reply: "first second", conversation_id, executionId })
  })

  it("with stream: true is 400 invalid_request and nothing runs or is written", async () => {
    const before = await credits()
    const executions = await countRows("executions")
    const refused = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "both", detach: true, stream: true } })
    expectError(refused, 400, "invalid_request")
    expect(await countRows("executions")).toBe(executions)
    expect(await credits()).toBe(before)
  })

  it("is refused like any run when no credit is left (402, nothing written)", async () => {
    await setCredits(server, 0)
    const executions = await countRows("executions")
    expectError(await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "broke", detach: true } }), 402, "insufficient_credits")
    expect(await countRows("executions")).toBe(executions)
  })

  it("is stopped by POST /executions/{id}/cancel: cancelled, nothing charged, its events end with run_cancelled", async () => {
    suite.answer = () => ({ parts: [{ kind: "text", text: "partial" }, { kind: "hang" }] })
    const before = await credits()
    const seen = fake.requests.length
    const detached = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "forever", detach: true } })
    expect(detached.status).toBe(202)
    const { executionId } = detached.body
    await eventually(async () => fake.requests.length > seen)
    const aborted = fake.nextAbort()
    const cancelled = await server.request("POST", `/executions/${executionId}/cancel`)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.execution).toMatchObject({ status: "cancelled", creditsCharged: 0 })
    await aborted
    expect(await credits()).toBe(before)
    const events = await (await eventsOf(executionId)).all()
    expect(events.at(-1)).toMatchObject({ event: "error", data: { error: { code: "run_cancelled" } } })
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1))
  })

  it("a detached run that fails charges nothing; its events end with run_failed", async () => {
    suite.answer = () => ({ status: 500, error: "the provider broke" })
    const before = await credits()
    const detached = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "fail", detach: true } })
    expect(detached.status).toBe(202)
    const { executionId } = detached.body
    expect(await finished(executionId)).toMatchObject({ status: "failed", creditsCharged: 0 })
    expect(await credits()).toBe(before)
    const events = await (await eventsOf(executionId)).all()
    expect(events.map((event) => event.event)).toEqual(["start", "error"])
    expect(events[1]).toMatchObject({ id: 2, data: { error: { code: "run_failed" } } })
  })

  it("works for Flow runs too (202 without a conversation for a Flow with questions)", async () => {
    const created = await server.request("POST", "/flows", {
      body: {
        name: "Detached flow",
        questions: [{ label: "Topic", type: "text", required: true }],
        steps: [{ type: "prompt", name: "written", template: "About {{topic}}" }]
      }
    })
    expect(created.status).toBe(201)
    const flow = created.body.flow.id as string
    expect((await server.request("POST", `/flows/${flow}/publish`)).status).toBe(200)
    suite.answer = () => say("A poem.")
    const before = await credits()
    const detached = await server.request("POST", `/flows/${flow}/run`, { body: { inputs: { topic: "tides" }, detach: true } })
    expect(detached.status).toBe(202)
    expect(detached.body).toEqual({ executionId: expect.any(String) })
    expect(await finished(detached.body.executionId)).toMatchObject({ kind: "flow", status: "succeeded", creditsCharged: 1 })
    expect(await credits()).toBe(before - 1)
    const events = await (await eventsOf(detached.body.executionId)).all()
    expect(events.at(-1)).toMatchObject({ event: "done", data: { executionId: detached.body.executionId, output: "A poem." } })
  })

  it("works for App conversations too: 202 with the conversation, its member answers, one credit, the reply stored once", async () => {
    const created = await server.request("POST", "/apps", { body: { name: "Detached desk", greeting: "Hello.", agentIds: [agent] } })
    expect(created.status).toBe(201)
    const app = created.body.app.id as string
    expect((await server.request("POST", `/apps/${app}/publish`)).status).toBe(200)
    suite.answer = () => say("From the desk.")
    const before = await credits()
    const detached = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "hello desk", detach: true } })
    expect(detached.status).toBe(202)
    expect(detached.body).toEqual({ executionId: expect.any(String), conversation_id: expect.any(String) })
    const { executionId, conversation_id } = detached.body
    expect(await finished(executionId)).toMatchObject({ kind: "app", targetId: app, status: "succeeded", creditsCharged: 1 })
    expect(await credits()).toBe(before - 1)
    const events = await (await eventsOf(executionId)).all()
    expect(events[0]).toEqual({ id: 1, event: "start", data: { executionId, conversation_id } })
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1))
    expect(events.at(-1)).toEqual({ id: events.length, event: "done", data: { reply: "From the desk.", conversation_id, greeting: "Hello.", executionId } })
    const messages = (await server.request("GET", `/conversations/${conversation_id}/messages`)).body.messages
    expect(messages.map((m: any) => [m.role, m.text, m.executionId])).toEqual([
      ["user", "hello desk", executionId],
      ["assistant", "From the desk.", executionId]
    ])
  })
})

describe("a run that finished without its final event stored", () => {
  it("ends its followers' stream with an error made from the execution's record, after its stored events", async () => {
    suite.answer = () => ({ status: 500, error: "the provider broke" })
    const detached = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "lost", detach: true } })
    expect(detached.status).toBe(202)
    const { executionId } = detached.body
    const execution = await finished(executionId)
    expect(execution.status).toBe("failed")
    // As when the instance running it was killed and recovery finished it: the final event never stored.
    await server.admin(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`DELETE FROM run_events WHERE execution_id = ${executionId} AND event = 'error'`.pipe(writing(writesEveryTable))
      ).pipe(Effect.orDie)
    )
    const events = await (await eventsOf(executionId)).all()
    expect(events).toEqual([
      { id: 1, event: "start", data: { executionId, conversation_id: detached.body.conversation_id } },
      { id: 2, event: "error", data: { error: { code: "run_failed", message: execution.error } } }
    ])
  })
})

describe("keeping events", () => {
  it("a run's events are deleted 24 hours after they were recorded; the execution stays readable", async () => {
    const live = await (await talk({ message: "remember me" })).all()
    const executionId = live[0]!.data.executionId as string
    expect(await (await eventsOf(executionId)).all()).toEqual(live)
    server.clock.advance(23 * 60 * 60 * 1000)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await (await eventsOf(executionId)).all()).toEqual(live)
    server.clock.advance(2 * 60 * 60 * 1000)
    await eventually(async () => (await server.request("GET", `/executions/${executionId}/events`)).status === 404)
    expect((await executionOf(executionId)).status).toBe("succeeded")
  })
})
