/**
 * An App's routing decision made by a language model (issue 25), over HTTP on a real server whose
 * default model (the Supervisor's) is a fake OpenAI-compatible model on a real socket: the trace
 * of `GET /executions/{id}?view=full` shows the Supervisor's model call choosing a member's tool
 * (model name, messages, the fake's token counts), the member's tool span with the `route` span of
 * the model's choice and the chosen Agent's own model call beneath it, then the Supervisor's
 * answering call, in order with parent links; MCP's `get_execution` in full view answers the same.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { describe, expect, it } from "vitest"
import { callTool, type FakeOpenAi, say, type SeenRequest } from "../support/fake-openai.js"
import { call, connect, personalKey } from "../support/mcp.js"
import type { TestServer } from "../support/server.js"
import { createAgent, fakeModelSuite } from "./support.js"

let fake: FakeOpenAi
let server: TestServer
let shipping: string
let billing: string

/** The Supervisor runs on the server's default model; the members name a model of their own. */
const suite = fakeModelSuite({ model: { defaultModel: "supervisor-model", maxAttempts: 1 } }, async (started) => {
  ;({ fake, server } = started)
  billing = await createAgent(server, { name: "Billing desk", description: "Invoices.", instructions: "You are billing.", model: "desk-model" })
  shipping = await createAgent(server, { name: "Shipping desk", description: "Parcels.", instructions: "You are shipping.", model: "desk-model" })
})

const systemPrompt = (request: SeenRequest): string => request.body.messages.find((m: any) => m.role === "system")?.content ?? ""

/** Creates and publishes an App routing to `agentIds`; answers its id. */
const createApp = async (agentIds: ReadonlyArray<string>): Promise<string> => {
  const created = await server.request("POST", "/apps", { body: { name: "Desk", description: "The front desk.", agentIds } })
  expect(created.status).toBe(201)
  const id = created.body.app.id as string
  expect((await server.request("POST", `/apps/${id}/publish`)).status).toBe(200)
  return id
}

const full = async (id: string) => {
  const response = await server.request("GET", `/executions/${id}?view=full`)
  expect(response.status).toBe(200)
  return response.body.execution
}

describe("an App's routing decision (language model)", () => {
  it("shows the Supervisor's call choosing the member, the route by model, the member's model call beneath its tool, then the answer", async () => {
    const app = await createApp([billing, shipping])
    const instructions = 'You are the Supervisor of the App "Desk". The front desk.'
    suite.answer = (request) => {
      if (systemPrompt(request) === "You are shipping.") return { ...say("Parcels ship on Tuesdays."), usage: { prompt_tokens: 15, completion_tokens: 5 } }
      if (request.body.messages.some((m: any) => m.role === "tool")) return { ...say("They ship on Tuesdays."), usage: { prompt_tokens: 90, completion_tokens: 6 } }
      return { ...callTool("ask_shipping_desk", { message: "When do parcels ship?" }), usage: { prompt_tokens: 60, completion_tokens: 12 } }
    }
    const seen = fake.requests.length
    const turn = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "Hello, when will my parcel ship?" } })
    expect(turn.status).toBe(200)
    expect(turn.body.reply).toBe("They ship on Tuesdays.")
    expect(fake.requests.slice(seen).map((request) => request.body.model)).toEqual(["supervisor-model", "desk-model", "supervisor-model"])

    const execution = await full(turn.body.executionId)
    expect(execution).toMatchObject({ id: turn.body.executionId, kind: "app", targetId: app, status: "succeeded" })
    const { spans, truncated } = execution.trace
    expect(truncated).toBe(false)
    expect(spans.map((span: any) => [span.id, span.kind, span.name, span.parentId, span.status])).toEqual([
      ["1", "model", "supervisor-model", null, "ok"],
      ["2", "tool", "ask_shipping_desk", null, "ok"],
      ["3", "route", "Shipping desk", "2", "ok"],
      ["4", "model", "desk-model", "2", "ok"],
      ["5", "model", "supervisor-model", null, "ok"]
    ])
    const [routing, asked, route, member, answered] = spans

    expect(routing).toMatchObject({
      model: "supervisor-model",
      provider: "openai",
      messages: {
        count: 2,
        byRole: { system: 1, user: 1, assistant: 0, tool: 0 },
        sent: [
          { role: "system", text: expect.stringContaining(instructions), truncated: false },
          { role: "user", text: "Hello, when will my parcel ship?", truncated: false }
        ]
      },
      tokensIn: 60,
      tokensOut: 12,
      reply: { text: "", truncated: false },
      toolCalls: [{ name: "ask_shipping_desk", arguments: { message: "When do parcels ship?" } }]
    })
    expect(asked).toMatchObject({ arguments: { message: "When do parcels ship?" }, result: { text: "Parcels ship on Tuesdays.", truncated: false } })
    expect(route.route).toEqual({ member: { kind: "agent", id: shipping, name: "Shipping desk", version: 1 }, by: "model", matched: [] })
    expect(member).toMatchObject({
      model: "desk-model",
      provider: "openai",
      messages: {
        count: 2,
        byRole: { system: 1, user: 1, assistant: 0, tool: 0 },
        sent: [
          { role: "system", text: "You are shipping.", truncated: false },
          { role: "user", text: "When do parcels ship?", truncated: false }
        ]
      },
      tokensIn: 15,
      tokensOut: 5,
      reply: { text: "Parcels ship on Tuesdays.", truncated: false },
      toolCalls: []
    })
    expect(answered).toMatchObject({
      model: "supervisor-model",
      tokensIn: 90,
      tokensOut: 6,
      reply: { text: "They ship on Tuesdays.", truncated: false },
      toolCalls: [],
      messages: { count: 4, byRole: { system: 1, user: 1, assistant: 1, tool: 1 } }
    })
    expect(answered.messages.sent.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "tool"])
    expect(answered.messages.sent[3]).toEqual({ role: "tool", text: "Parcels ship on Tuesdays.", truncated: false })

    // In order: each span starts no earlier than the one before; each step starts once the one it follows has finished
    // (ends are floored to the millisecond, so a start is never before the end of what came before it).
    spans.forEach((span: any, i: number) => {
      expect(Date.parse(span.finishedAt)).toBeGreaterThanOrEqual(Date.parse(span.startedAt))
      if (i > 0) expect(Date.parse(span.startedAt)).toBeGreaterThanOrEqual(Date.parse(spans[i - 1].startedAt))
    })
    expect(Date.parse(asked.startedAt)).toBeGreaterThanOrEqual(Date.parse(routing.finishedAt))
    expect(Date.parse(member.startedAt)).toBeGreaterThanOrEqual(Date.parse(route.finishedAt))
    expect(Date.parse(answered.startedAt)).toBeGreaterThanOrEqual(Date.parse(member.finishedAt))
    expect(Date.parse(answered.startedAt)).toBeGreaterThanOrEqual(Date.parse(asked.finishedAt))

    const memberKey = await personalKey(server, "app-tracer@example.com", "member")
    const client: Client = await connect(server, memberKey)
    try {
      const viaMcp = await call(client, "get_execution", { executionId: turn.body.executionId, view: "full" })
      expect(viaMcp.isError).toBe(false)
      expect(viaMcp.body.execution).toEqual(execution)
    } finally {
      await client.close()
    }
  })

  it("a model that calls no member's tool records no route: the Supervisor's one call answers", async () => {
    const app = await createApp([billing, shipping])
    suite.answer = () => ({ ...say("No desk handles the weather."), usage: { prompt_tokens: 55, completion_tokens: 8 } })
    const turn = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "Will it rain?" } })
    expect(turn.status).toBe(200)
    const { spans } = (await full(turn.body.executionId)).trace
    expect(spans).toEqual([
      expect.objectContaining({
        id: "1",
        parentId: null,
        kind: "model",
        name: "supervisor-model",
        status: "ok",
        tokensIn: 55,
        tokensOut: 8,
        reply: { text: "No desk handles the weather.", truncated: false },
        toolCalls: []
      })
    ])
  })
})
