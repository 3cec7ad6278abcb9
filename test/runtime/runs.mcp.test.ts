/**
 * The run, agents and authoring families through the MCP SDK's client, with the offline `builtin`
 * model: authoring and publishing, runs by id and by name, per-item tools (Flow questions as typed
 * parameters), executions in both views, trial and gate rules, roles, and the key's shared rate limit
 * and credits.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, connect, personalKey, toolNames } from "../support/mcp.js"

let server: TestServer
let memberKey: string
let member: Client
let flowId: string

const setOrg = (slug: string, changes: Parameters<AccountsService["setOrganization"]>[1]) =>
  server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, changes)))

beforeAll(async () => {
  server = await startTestServer()
  memberKey = await personalKey(server, "author@example.com", "member")
  member = await connect(server, memberKey)
  const kb = await call(member, "create_knowledgebase", { name: "Support" })
  await call(member, "save_page", { knowledgebaseId: "Support", title: "Refunds", bodyMarkdown: "Refunds are paid within 30 days of a return." })
  const agent = await call(member, "save_agent", { name: "Helper", instructions: "Answer from the handbook.", knowledgebaseIds: ["Support"] })
  expect(agent.body).toMatchObject({ created: true, agent: { name: "Helper", knowledgebaseIds: [kb.body.knowledgebase.id] } })
  expect((await call(member, "publish_agent", { id: "Helper" })).body).toMatchObject({ id: agent.body.agent.id, version: 1 })
  const flow = await call(member, "save_flow", {
    name: "Greeter",
    questions: [{ label: "Company name", type: "text", required: true }, { label: "Size", type: "select", options: ["small", "large"] }],
    steps: [{ type: "template", name: "greeting", template: "Hello {{company_name}} ({{size}})" }]
  })
  expect(flow.isError).toBe(false)
  flowId = flow.body.flow.id
  expect((await call(member, "publish_flow", { id: flowId })).isError).toBe(false)
})
afterAll(async () => {
  await member.close()
  await server.stop()
})

describe("tool lists", () => {
  it("offers a member every family by default, with one tool per published item", async () => {
    const names = await toolNames(member)
    for (const name of ["list_agents", "run_agent", "list_flows", "run_flow", "get_execution", "save_agent", "save_flow", "save_app", "publish_agent", "publish_flow", "publish_app", "run_draft", "list_authored_agents", "list_authored_flows", "list_authored_apps", "agent_helper", "flow_greeter", "read_page"]) {
      expect(names).toContain(name)
    }
  })

  it("offers a viewer the run tools but none of the authoring ones", async () => {
    const viewer = await connect(server, await personalKey(server, "watcher@example.com", "viewer"), { tools: "run,authoring,agents" })
    const names = await toolNames(viewer)
    expect(names).toEqual(["agent_helper", "flow_greeter", "get_execution", "list_agents", "list_flows", "run_agent", "run_flow", "search_docs", "whoami"])
    await viewer.close()
  })

  it("selects families with ?tools=", async () => {
    const client = await connect(server, memberKey, { tools: "run" })
    expect(await toolNames(client)).toEqual(["get_execution", "list_agents", "list_flows", "run_agent", "run_flow", "search_docs", "whoami"])
    await client.close()
  })

  it("gives Flow tools the Flow's questions as typed parameters", async () => {
    const tools = (await member.listTools()).tools
    const greeter = tools.find((candidate) => candidate.name === "flow_greeter")!
    expect(greeter.inputSchema).toMatchObject({
      type: "object",
      properties: { company_name: { type: "string" }, size: { enum: ["small", "large"] } },
      required: ["company_name"]
    })
  })
})

describe("runs", () => {
  it("runs an Agent by name, with reply, conversationId and executionId, and reads the execution in both views", async () => {
    const ran = await call(member, "run_agent", { agentId: "Helper", message: "When are refunds paid?" })
    expect(ran.isError).toBe(false)
    expect(ran.body).toEqual({ reply: expect.stringContaining("30 days"), conversationId: expect.any(String), executionId: expect.any(String) })
    const again = await call(member, "agent_helper", { message: "And returns?", conversationId: ran.body.conversationId })
    expect(again.body.conversationId).toBe(ran.body.conversationId)
    const summary = await call(member, "get_execution", { executionId: ran.body.executionId })
    expect(summary.body.execution).toMatchObject({ id: ran.body.executionId, kind: "agent", status: "succeeded" })
    for (const called of summary.body.execution.toolsCalled) expect(called.arguments).toBeUndefined()
    const full = await call(member, "get_execution", { executionId: ran.body.executionId, view: "full" })
    expect(full.body.execution.toolsCalled.length).toBeGreaterThan(0)
    for (const called of full.body.execution.toolsCalled) expect(called.arguments).toBeDefined()
  })

  it("runs a Flow through its tool and by name, and refuses bad inputs listing them", async () => {
    const byTool = await call(member, "flow_greeter", { company_name: "Acme", size: "large" })
    expect(byTool.body).toMatchObject({ output: "Hello Acme (large)", executionId: expect.any(String) })
    const byName = await call(member, "run_flow", { flowId: "Greeter", inputs: { company_name: "Beta" } })
    expect(byName.body.output).toBe("Hello Beta ()")
    const refused = await call(member, "run_flow", { flowId: "Greeter", inputs: { size: "huge" } })
    expect(refused.body.error.code).toBe("invalid_request")
    expect(refused.body.error.message).toContain("company_name")
  })

  it("lists Agents then Apps, and runs an App through run_agent", async () => {
    const app = await call(member, "save_app", { name: "Desk", agentIds: ["Helper"] })
    expect(app.body).toMatchObject({ created: true })
    await call(member, "publish_app", { id: "Desk" })
    const listed = await call(member, "list_agents", {})
    expect(listed.body.items.map((item: { kind: string; name: string }) => `${item.kind}:${item.name}`)).toEqual(["agent:Helper", "app:Desk"])
    const paged = await call(member, "list_agents", { limit: 1 })
    expect(paged.body.items).toHaveLength(1)
    const next = await call(member, "list_agents", { limit: 1, cursor: paged.body.nextCursor })
    expect(next.body.items[0]).toMatchObject({ kind: "app", name: "Desk" })
    const ran = await call(member, "run_agent", { agentId: "Desk", message: "When are refunds paid?" })
    expect(ran.isError).toBe(false)
    expect(ran.body.conversationId).toEqual(expect.any(String))
    expect(await toolNames(member)).toContain("app_desk")
  })

  it("runs drafts and lists authored items with updatedSince", async () => {
    const draft = await call(member, "save_agent", { agentId: "Helper", instructions: "Be brief." })
    expect(draft.body).toMatchObject({ created: false, agent: { instructions: "Be brief." } })
    const ran = await call(member, "run_draft", { kind: "agent", id: "Helper", message: "Refunds?" })
    expect(ran.isError).toBe(false)
    const authored = await call(member, "list_authored_agents", { fields: ["name", "published"] })
    expect(authored.body).toEqual({ items: [{ name: "Helper", published: true }], nextCursor: null })
    const later = await call(member, "list_authored_agents", { updatedSince: "2999-01-01T00:00:00Z" })
    expect(later.body.items).toEqual([])
  })

  it("answers a missing item with not_found naming near matches", async () => {
    const missing = await call(member, "run_agent", { agentId: "Helpr", message: "hi" })
    expect(missing.body.error.code).toBe("not_found")
    expect(missing.body.error.message).toContain("'Helper'")
  })
})

describe("plans, gates and limits", () => {
  it("on a trial refuses runs with feature_not_available and allows building", async () => {
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.createOrganization({ slug: "trying", plan: "trial" })))
    await setOrg("trying", { enable: ["mcp"] })
    const client = await connect(server, await personalKey(server, "trier@example.com", "member", "trying"))
    const saved = await call(client, "save_agent", { name: "Trial agent" })
    expect(saved.isError).toBe(false)
    expect((await call(client, "publish_agent", { id: "Trial agent" })).isError).toBe(false)
    const refused = await call(client, "run_agent", { agentId: "Trial agent", message: "hi" })
    expect(refused.body.error.code).toBe("feature_not_available")
    const draft = await call(client, "run_draft", { kind: "agent", id: "Trial agent", message: "hi" })
    expect(draft.body.error.code).toBe("feature_not_available")
    const executions = await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.organization("trying")))
    expect(executions.creditsUsed).toBe(0)
    await client.close()
  })

  it("leaves App tools out while the apps gate is off; called, save_app answers api_disabled", async () => {
    await setOrg("default", { disable: ["apps"] })
    try {
      const names = await toolNames(member)
      expect(names).not.toContain("save_app")
      expect(names).not.toContain("app_desk")
      const hidden = await call(member, "save_app", { name: "Hidden app" })
      expect(hidden.body.error).toEqual({ code: "api_disabled", message: expect.any(String) })
      const listed = await call(member, "list_agents", {})
      expect(listed.body.items.map((item: { kind: string }) => item.kind)).toEqual(["agent"])
    } finally {
      await setOrg("default", { enable: ["apps"] })
    }
  })

  it("drops per-item tools when a kind has more than ten published items", async () => {
    const org = await server.createOrganization("many")
    void org
    await setOrg("many", { enable: ["mcp"] })
    const client = await connect(server, await personalKey(server, "many@example.com", "member", "many"))
    for (let n = 1; n <= 11; n++) {
      await call(client, "save_agent", { name: `Agent ${n}` })
      await call(client, "publish_agent", { id: `Agent ${n}` })
      expect((await toolNames(client)).filter((name) => name.startsWith("agent_"))).toHaveLength(n <= 10 ? n : 0)
    }
    await client.close()
  })

  it("charges search credits as REST does and refuses with insufficient_credits when none are left", async () => {
    await setOrg("default", { credits: 0 })
    const refused = await call(member, "search_knowledgebase", { knowledgebaseId: "Support", query: "refunds" })
    expect(refused.body.error.code).toBe("insufficient_credits")
    const free = await call(member, "search_knowledgebase", { knowledgebaseId: "Support", query: "refunds", kinds: ["pages"] })
    expect(free.isError).toBe(false)
    await setOrg("default", { credits: 1000 })
  })
})

describe("rate limit", () => {
  it("shares the key's budget between REST and MCP", async () => {
    const limited = await startTestServer({ server: { requestsPerMinute: 4 } })
    try {
      const key = await personalKey(limited, "busy@example.com", "member")
      await limited.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { enable: ["mcp"] })))
      const client = await connect(limited, key, { tools: "knowledge" })
      expect((await call(client, "list_knowledgebases")).isError).toBe(false)
      expect((await call(client, "list_knowledgebases")).isError).toBe(false)
      expect((await limited.request("GET", "/knowledgebases", { key })).status).toBe(200)
      expect((await limited.request("GET", "/knowledgebases", { key })).status).toBe(200)
      const over = await call(client, "list_knowledgebases")
      expect(over.body.error.code).toBe("rate_limited")
      expect((await limited.request("GET", "/knowledgebases", { key })).status).toBe(429)
      await client.close()
    } finally {
      await limited.stop()
    }
  })
})
