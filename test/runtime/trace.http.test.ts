/**
 * Execution traces (issue 25) over HTTP on a real server, against a fake OpenAI-compatible model
 * on a real socket: `GET /executions/{id}?view=full` shows an Agent turn's model calls (messages
 * sent, tokens reported, reply) and its knowledge search (arguments, passages with citations and
 * scores) in order with timings; an App's routing decision (builtin, by description and by
 * falling back to the first member) with the member's run beneath it; a transaction's output
 * validation, passed and failed; the default and summary views unchanged; another organization's
 * execution 404; MCP's `get_execution` in full view answering the same.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, insertKnowledgebases } from "../support/fixtures.js"
import { callTool, type FakeOpenAi, say } from "../support/fake-openai.js"
import { call, connect, personalKey } from "../support/mcp.js"
import type { TestServer } from "../support/server.js"
import { readySource } from "../support/sources.js"
import { createAgent, fakeModelSuite, openStream } from "./support.js"

let fake: FakeOpenAi
let server: TestServer
let otherKey: string
let kb: string
let searcher: string
let shipping: string
let billing: string

const suite = fakeModelSuite({ model: { defaultModel: "builtin", maxAttempts: 1 } }, async (started) => {
  ;({ fake, server } = started)
  otherKey = await server.createOrganization("other")
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("other", { enable: ["apps"] })))
  const [shippingKb, billingKb] = await insertKnowledgebases(server, { count: 2, prefix: "Traced" })
  kb = shippingKb!.id
  await readySource(server, kb, { name: "Shipping guide", markdown: true, text: "# Shipping\n\nParcels to Zanzibarra ship every Tuesday from the Leeds depot.\n" })
  await readySource(server, billingKb!.id, { name: "Billing guide", markdown: true, text: "# Invoices\n\nInvoices are due within 30 days of issue.\n" })
  searcher = await createAgent(server, { name: "Searcher", instructions: "Answer from the guides.", model: "fake-model", knowledgebaseIds: [kb] })
  shipping = await createAgent(server, { name: "Shipping desk", description: "Answers questions about parcels and shipping.", knowledgebaseIds: [kb] })
  billing = await createAgent(server, { name: "Billing desk", description: "Answers questions about invoices and payments.", knowledgebaseIds: [billingKb!.id] })
})

const read = (id: string, query = "", key?: string) => server.request("GET", `/executions/${id}${query}`, key === undefined ? {} : { key })
const full = async (id: string) => {
  const response = await read(id, "?view=full")
  expect(response.status).toBe(200)
  return response.body.execution
}

/** Creates and publishes an App (with `api` on its draft when given); answers its id. */
const createApp = async (body: Record<string, unknown>, api?: Record<string, unknown>): Promise<string> => {
  const created = await server.request("POST", "/apps", { body: { name: "Desk", ...body } })
  expect(created.status).toBe(201)
  const id = created.body.app.id as string
  if (api !== undefined) expect((await server.request("PATCH", `/apps/${id}/draft`, { body: { api } })).status).toBe(200)
  expect((await server.request("POST", `/apps/${id}/publish`)).status).toBe(200)
  return id
}

/** Spans in order: each starts no earlier than the one before, ends no earlier than it starts, and its parent (if any) came before it. */
const expectOrderedTimings = (spans: ReadonlyArray<any>) => {
  spans.forEach((span, i) => {
    expect(span.id).toBe(String(i + 1))
    expect(Date.parse(span.finishedAt)).toBeGreaterThanOrEqual(Date.parse(span.startedAt))
    expect(span.durationMs).toBeGreaterThanOrEqual(0)
    if (i > 0) expect(Date.parse(span.startedAt)).toBeGreaterThanOrEqual(Date.parse(spans[i - 1].startedAt))
    if (span.parentId !== null) expect(Number(span.parentId)).toBeLessThan(i + 1)
  })
}

describe("an Agent turn on a language model that searches", () => {
  let executionId: string

  beforeAll(async () => {
    const usages = [
      { prompt_tokens: 42, completion_tokens: 7 },
      { prompt_tokens: 120, completion_tokens: 9 }
    ]
    suite.answer = (request, n) =>
      request.body.messages.some((m: any) => m.role === "tool")
        ? { ...say("Tuesdays, ", "per the Shipping guide."), usage: usages[1]! }
        : { ...callTool("search_knowledgebases", { query: "Zanzibarra" }), usage: usages[0]! }
    const seen = fake.requests.length
    const streamed = await openStream(server, `/agents/${searcher}/conversation`, { message: "When do parcels to Zanzibarra ship?", stream: true })
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(events.map((e) => e.event)).toEqual(["start", "tool", "delta", "delta", "done"])
    executionId = events[0]!.data.executionId
    // Streamed requests ask the provider for its token counts.
    expect(fake.requests.slice(seen).map((request) => request.body.stream_options)).toEqual([{ include_usage: true }, { include_usage: true }])
  })

  it("view=full shows each model call and the search in order, with messages, tokens, arguments, passages and timings", async () => {
    const execution = await full(executionId)
    expect(execution).toMatchObject({ id: executionId, status: "succeeded", toolsCalled: [{ name: "search_knowledgebases", arguments: { query: "Zanzibarra" } }] })
    const { spans, truncated } = execution.trace
    expect(truncated).toBe(false)
    expect(spans.map((span: any) => [span.kind, span.name, span.parentId, span.status])).toEqual([
      ["model", "fake-model", null, "ok"],
      ["tool", "search_knowledgebases", null, "ok"],
      ["model", "fake-model", null, "ok"]
    ])
    expectOrderedTimings(spans)
    const [asked, searched, answered] = spans
    expect(asked).toMatchObject({
      model: "fake-model",
      provider: "openai",
      messages: {
        count: 2,
        byRole: { system: 1, user: 1, assistant: 0, tool: 0 },
        sent: [
          { role: "system", text: "Answer from the guides.", truncated: false },
          { role: "user", text: "When do parcels to Zanzibarra ship?", truncated: false }
        ]
      },
      tokensIn: 42,
      tokensOut: 7,
      reply: { text: "", truncated: false },
      toolCalls: [{ name: "search_knowledgebases", arguments: { query: "Zanzibarra" } }]
    })
    expect(Date.parse(searched.startedAt)).toBeGreaterThanOrEqual(Date.parse(asked.finishedAt))
    expect(searched.arguments).toEqual({ query: "Zanzibarra" })
    expect(searched.passages).toHaveLength(1)
    expect(searched.passages[0]).toEqual({
      text: expect.stringContaining("Tuesday"),
      truncated: false,
      source: "Shipping guide",
      section: null,
      score: expect.any(Number),
      citation: expect.objectContaining({ kind: "document", knowledgebaseId: kb, sourceName: "Shipping guide", sourceId: expect.any(String) })
    })
    expect(searched.passages[0].score).toBeGreaterThan(0)
    // The result is what the model was sent back: the same passage.
    expect(JSON.parse(searched.result.text).passages[0]).toMatchObject({ source: "Shipping guide", text: searched.passages[0].text })
    expect(answered).toMatchObject({
      tokensIn: 120,
      tokensOut: 9,
      reply: { text: "Tuesdays, per the Shipping guide.", truncated: false },
      toolCalls: [],
      messages: { count: 4, byRole: { system: 1, user: 1, assistant: 1, tool: 1 } }
    })
    expect(answered.messages.sent.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "tool"])
    expect(answered.messages.sent[3].text).toBe(searched.result.text)
    expect(asked.error).toBeUndefined()
  })

  it("the default and summary views are unchanged: no trace key, the summary without arguments", async () => {
    const whole = await full(executionId)
    const plain = await read(executionId)
    expect(plain.status).toBe(200)
    expect(Object.keys(plain.body.execution)).not.toContain("trace")
    const { trace: _trace, ...rest } = whole
    expect(plain.body.execution).toEqual(rest)
    const summary = await read(executionId, "?view=summary")
    expect(Object.keys(summary.body.execution)).not.toContain("trace")
    expect(summary.body.execution.toolsCalled).toEqual([{ name: "search_knowledgebases" }])
    expectError(await read(executionId, "?view=everything"), 400, "invalid_request")
  })

  it("another organization's execution is 404 in full view", async () => {
    expectError(await read(executionId, "?view=full", otherKey), 404, "not_found")
  })

  it("MCP's get_execution with view full answers the same trace; its default view has none", async () => {
    const memberKey = await personalKey(server, "tracer@example.com", "member")
    const client: Client = await connect(server, memberKey)
    try {
      const viaMcp = await call(client, "get_execution", { executionId, view: "full" })
      expect(viaMcp.isError).toBe(false)
      expect(viaMcp.body.execution).toEqual(await full(executionId))
      const summary = await call(client, "get_execution", { executionId })
      expect(Object.keys(summary.body.execution)).not.toContain("trace")
    } finally {
      await client.close()
    }
  })

  it("a provider that reports no usage leaves the tokens null; a failed call is an error span", async () => {
    suite.answer = () => say("plain")
    const plain = await server.request("POST", `/agents/${searcher}/conversation`, { body: { message: "hello" } })
    expect(plain.status).toBe(200)
    const [call1] = (await full(plain.body.executionId)).trace.spans
    expect(call1).toMatchObject({ kind: "model", tokensIn: null, tokensOut: null, reply: { text: "plain", truncated: false } })
    suite.answer = () => ({ status: 500, error: "upstream exploded" })
    server.clock.advance(1_000)
    expectError(
      await server.request("POST", `/agents/${searcher}/conversation`, { body: { message: "hello again", conversation_id: plain.body.conversation_id } }),
      502,
      "run_failed"
    )
    const failed = await full(await latestExecution("agent", searcher))
    expect(failed.status).toBe("failed")
    expect(failed.trace.spans).toEqual([
      expect.objectContaining({ kind: "model", name: "fake-model", status: "error", error: expect.stringContaining("The model provider"), messages: expect.objectContaining({ count: 4 }) })
    ])
    expect(failed.trace.spans[0].tokensIn).toBeUndefined()
  })
})

describe("bounds and a running execution", () => {
  it("stores a message longer than 2,000 characters cut and marked truncated, counted whole", async () => {
    const long = `${"parcel ".repeat(400)}end`
    suite.answer = () => say("noted")
    const turn = await server.request("POST", `/agents/${searcher}/conversation`, { body: { message: long } })
    expect(turn.status).toBe(200)
    const [model] = (await full(turn.body.executionId)).trace.spans
    const user = model.messages.sent.find((m: any) => m.role === "user")
    expect(user).toEqual({ role: "user", text: long.slice(0, 2_000), truncated: true })
    expect(fake.requests.at(-1)!.body.messages.at(-1).content).toBe(long)
  })

  it("shows trace null while the execution runs; once cancelled, the model call cut short is an error span", async () => {
    suite.answer = () => ({ parts: [{ kind: "hang" }] })
    const streamed = await openStream(server, `/agents/${searcher}/conversation`, { message: "Take your time", stream: true })
    const start = await streamed.next()
    expect(start!.event).toBe("start")
    const id = start!.data.executionId as string
    const running = await full(id)
    expect(running).toMatchObject({ status: "running", trace: null })
    const cancelled = await server.request("POST", `/executions/${id}/cancel`)
    expect(cancelled.status).toBe(200)
    const after = await full(id)
    expect(after.status).toBe("cancelled")
    expect(after.trace.spans).toEqual([expect.objectContaining({ kind: "model", name: "fake-model", status: "error", error: expect.any(String) })])
    await streamed.all()
  })
})

describe("an App's routing decision (builtin)", () => {
  it("shows the member's tool with the route chosen by description, the member's model call and search beneath it", async () => {
    const app = await createApp({ agentIds: [shipping, billing] })
    const turn = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "When do parcels ship?" } })
    expect(turn.status).toBe(200)
    const { spans } = (await full(turn.body.executionId)).trace
    expect(spans.map((span: any) => [span.kind, span.name, span.parentId])).toEqual([
      ["tool", "ask_shipping_desk", null],
      ["route", "Shipping desk", "1"],
      ["model", "builtin", "1"],
      ["tool", "search_knowledgebases", "3"]
    ])
    expectOrderedTimings(spans)
    expect(spans[0].arguments).toEqual({ message: "When do parcels ship?", member: shipping, version: 1, matched: ["parcels", "ship"] })
    expect(spans[0].result.text).toBe(turn.body.reply)
    expect(spans[1].route).toEqual({ member: { kind: "agent", id: shipping, name: "Shipping desk", version: 1 }, by: "description", matched: ["parcels", "ship"] })
    expect(spans[2]).toMatchObject({
      provider: "builtin",
      tokensIn: null,
      tokensOut: null,
      messages: { count: 1, byRole: { system: 0, user: 1, assistant: 0, tool: 0 }, sent: [{ role: "user", text: "When do parcels ship?", truncated: false }] }
    })
    expect(spans[3].passages[0]).toMatchObject({ source: "Shipping guide", citation: { knowledgebaseId: kb } })
  })

  it("a message matching no member shows the fallback to the first", async () => {
    const app = await createApp({ agentIds: [billing, shipping] })
    const turn = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "Zzyzx?" } })
    expect(turn.status).toBe(200)
    const route = (await full(turn.body.executionId)).trace.spans.find((span: any) => span.kind === "route")
    expect(route.route).toEqual({ member: { kind: "agent", id: billing, name: "Billing desk", version: 1 }, by: "first", matched: [] })
  })
})

describe("a transaction's validations", () => {
  const inputSchema = { type: "object", properties: { question: { type: "string" } }, required: ["question"] }

  it("a valid output is a passed validation after the member's run", async () => {
    const outputSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
    const app = await createApp({ agentIds: [billing] }, { transactionEnabled: true, inputSchema, outputSchema })
    const done = await server.request("POST", `/apps/${app}/transaction`, { body: { input: { question: "When are invoices due?" } } })
    expect(done.status).toBe(200)
    const { spans } = (await full(done.body.executionId)).trace
    expect(spans.at(-1)).toMatchObject({ kind: "validation", name: "output", parentId: null, status: "ok", validation: { schema: "output", valid: true, problems: [] } })
    expect(spans[0]).toMatchObject({ kind: "tool", name: "ask_billing_desk" })
  })

  it("an output the schema refuses is a failed validation naming the problem, on a failed execution", async () => {
    const tight = { type: "object", properties: { answer: { type: "string", maxLength: 5 } }, required: ["answer"] }
    const app = await createApp({ agentIds: [billing] }, { transactionEnabled: true, inputSchema, outputSchema: tight })
    const failed = await server.request("POST", `/apps/${app}/transaction`, { body: { input: { question: "When are invoices due?" } } })
    expectError(failed, 502, "run_failed")
    const execution = await full(await latestExecution("transaction", app))
    expect(execution).toMatchObject({ status: "failed", creditsCharged: 0 })
    expect(execution.trace.spans.at(-1)).toMatchObject({
      kind: "validation",
      name: "output",
      status: "error",
      error: expect.stringContaining("output.answer: must NOT have more than 5 characters"),
      validation: { schema: "output", valid: false, problems: ["output.answer: must NOT have more than 5 characters"] }
    })
  })
})

/** The id of the newest execution of kind `kind` of `target` (read in the database: a refused run answers no id). */
const latestExecution = (kind: string, target: string): Promise<string> =>
  server.admin(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ id: string }>`SELECT id FROM executions WHERE kind = ${kind} AND target_id = ${target} ORDER BY started_at DESC, id DESC LIMIT 1`
    ).pipe(
      Effect.map((rows) => rows[0]!.id),
      Effect.orDie
    )
  )
