/**
 * Every tool's title and output schema, and the structured results they describe (issues 22 and 23):
 * each output schema is derived from the REST answers of the operations the tool mirrors (read here
 * from the contract itself), or declared by a tool that says why; over MCP every tool is listed with
 * its title and that very schema, and every answer carries `structuredContent` that validates
 * against it (with Ajv here, and by the SDK's client on every call) and equals its JSON text.
 */
import { HttpApi, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Ajv } from "ajv"
import addFormatsModule from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../server/api.js"
import { AnsweredOnRequest } from "../../server/http/contract.js"
import { type JsonSchema, standaloneSchema } from "../../server/mcp-door/operation.js"
import type { McpTool } from "../../server/mcp-door/tool.js"
import { agentItemTool, appItemTool, flowItemTool } from "../../server/runtime/mcp/items.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, connect, personalKey } from "../support/mcp.js"
import { everyTool, sampleFlow } from "../support/mcp-tools.js"

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => void
const ajv = new Ajv({ strict: false, allErrors: true })
addFormats(ajv)

/**
 * The JSON Schema of each operation's success answer, by `group.endpoint`, read from the contract;
 * without the successes answered only on request (a run's 202 to `detach`), which no tool asks for.
 */
const answers = (() => {
  const found = new Map<string, JsonSchema>()
  HttpApi.reflect(Api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) => {
      const members = new Set<Schema.Schema.Any>()
      HttpApiSchema.deunionize(members, endpoint.successSchema)
      const answered = [...members].filter((member) => member.ast.annotations[AnsweredOnRequest] !== true)
      const schema = answered.length === members.size ? endpoint.successSchema : answered.length === 1 ? answered[0]! : Schema.Union(...answered)
      found.set(`${group.identifier}.${endpoint.name}`, standaloneSchema(schema))
    }
  })
  return found
})()

/** The members of a schema that is a union of objects, or the schema itself. */
const membersOf = (schema: JsonSchema): Array<JsonSchema> =>
  Array.isArray(schema["anyOf"]) && schema["properties"] === undefined ? (schema["anyOf"] as Array<JsonSchema>).flatMap(membersOf) : [schema]

/** The one array of a list's body that is not kept as is: its item schema. */
const listedItem = (body: JsonSchema, kept: ReadonlyArray<string>): JsonSchema =>
  Object.entries(body["properties"] as Record<string, JsonSchema>).find(([name, property]) => property["type"] === "array" && !kept.includes(name))![1]["items"]

/** What is wrong with a tool's title and output schema against its operations' answers (empty: nothing). */
const problemsOf = (candidate: McpTool): Array<string> => {
  const problems: Array<string> = []
  const output = candidate.outputSchema
  if (!(typeof candidate.title === "string" && candidate.title.length > 2)) problems.push("no title")
  if (output["type"] !== "object") problems.push(`output schema of type ${output["type"]}, not object`)
  try {
    ajv.compile(output)
  } catch (error) {
    problems.push(`output schema refused by Ajv: ${String(error)}`)
  }
  if (candidate.operations.length === 0 || candidate.answers.startsWith("its own answer")) {
    if (!(candidate.answers.length > 30)) problems.push("an answer of its own without why")
    return problems
  }
  if (candidate.operations.length === 1 && candidate.title !== candidate.operations[0]!.summary && candidate.operations[0]!.summary.length === 0) problems.push("no summary")
  const bodies = candidate.operations.map((one) => answers.get(one.name)!)
  const restMembers = bodies.flatMap(membersOf).map((member) => JSON.stringify(member))
  const distinct = [...new Set(restMembers)].map((member) => JSON.parse(member) as JsonSchema)
  const mine = membersOf(output)
  if (candidate.answers === "the REST body as is") {
    if (JSON.stringify(mine) !== JSON.stringify(distinct)) problems.push("not the REST body")
  } else if (candidate.answers.startsWith("a page of REST's items")) {
    const kept = Object.keys(output["properties"]).filter((name) => name !== "items" && name !== "nextCursor")
    const items = bodies.map((body) => listedItem(body, kept))
    const listed = output["properties"]["items"]["items"] as JsonSchema
    const listedMembers = candidate.operations.length > 1 ? (listed["anyOf"] as Array<JsonSchema>) : [listed]
    items.forEach((item, index) => {
      const theirs = JSON.stringify(membersOf(item).map((member) => Object.keys(member["properties"] ?? {}).sort()))
      const ours = JSON.stringify(membersOf(listedMembers[index]!).map((member) => Object.keys(member["properties"] ?? {}).filter((name) => name !== "kind").sort()))
      if (theirs !== ours) problems.push(`items ${ours}, REST's ${theirs}`)
      if ("fields" in (candidate.input as object) && membersOf(listedMembers[index]!).some((member) => (member["required"] ?? []).some((name: string) => name !== "kind"))) {
        problems.push("items required though `fields` cuts them")
      }
    })
    for (const name of kept) if (JSON.stringify(output["properties"][name]) !== JSON.stringify(bodies[0]!["properties"][name])) problems.push(`${name}: not REST's`)
  } else if (candidate.answers === "the REST body with fields of the tool's own") {
    if (mine.length !== distinct.length) problems.push("not one member per REST body")
    distinct.forEach((member, index) => {
      for (const [name, schema] of Object.entries(member["properties"] as Record<string, JsonSchema>)) {
        if (JSON.stringify(mine[index]!["properties"][name]) !== JSON.stringify(schema)) problems.push(`${name}: not REST's`)
      }
    })
  } else if (candidate.answers.startsWith("the REST body with `conversation_id`")) {
    if (mine.length !== distinct.length) problems.push("not one member per REST body")
    distinct.forEach((member, index) => {
      const renamed = Object.keys(member["properties"]).map((name) => (name === "conversation_id" ? "conversationId" : name))
      if (JSON.stringify(Object.keys(mine[index]!["properties"])) !== JSON.stringify(renamed)) problems.push("not REST's body renamed")
    })
  } else {
    problems.push(`an unknown derivation: ${candidate.answers}`)
  }
  return problems
}

describe("MCP tool output schemas", () => {
  it("derive each tool's title and output schema from its operations' summaries and answers; the others declare theirs and say why", async () => {
    const tools = await everyTool()
    expect(tools.length).toBeGreaterThan(55)
    const problems = Object.fromEntries(tools.map((candidate) => [candidate.name, problemsOf(candidate)]).filter(([, found]) => (found as Array<string>).length > 0))
    expect(problems).toEqual({})
    const byName = new Map(tools.map((candidate) => [candidate.name, candidate]))
    expect(byName.get("list_knowledgebases")).toMatchObject({ title: "List Knowledgebases", answers: expect.stringContaining("{items, nextCursor}") })
    expect(byName.get("read_page")!.outputSchema["required"]).toEqual(["page", "truncated"])
    expect(byName.get("run_agent")!.outputSchema["anyOf"].map((member: JsonSchema) => member["required"])).toEqual([
      ["reply", "conversationId", "executionId"],
      ["reply", "conversationId", "greeting", "executionId"]
    ])
    expect(byName.get("whoami")).toMatchObject({ title: "Who am I", answers: expect.stringContaining("its own answer") })
  })

  it("finds an output schema that is not its operation's answer", async () => {
    const tools = await everyTool()
    const outline = tools.find((candidate) => candidate.name === "get_knowledgebase_outline")!
    const wrong = { ...outline, outputSchema: tools.find((candidate) => candidate.name === "get_source")!.outputSchema }
    expect(problemsOf(wrong)).toEqual(["not the REST body"])
    const list = tools.find((candidate) => candidate.name === "list_sources")!
    const required = { ...list, outputSchema: { ...list.outputSchema, properties: { ...list.outputSchema["properties"], items: { type: "array", items: { ...answers.get("sources.list")!["properties"]["sources"]["items"], required: ["id"] } } } } }
    expect(problemsOf(required)).toEqual(["items required though `fields` cuts them"])
  })
})

describe("MCP structured results", () => {
  let server: TestServer
  let client: Client
  let listed: Map<string, { title?: string | undefined; outputSchema?: JsonSchema | undefined }>

  /** Calls a tool through the SDK's client (which checks structuredContent against the listed schema) and checks it again here. */
  const structured = async (name: string, args: Record<string, unknown> = {}): Promise<any> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult
    const text = (result.content[0] as { text: string }).text
    expect({ name, isError: result.isError ?? false, text: result.isError ? text : "" }).toEqual({ name, isError: false, text: "" })
    expect(result.structuredContent).toEqual(JSON.parse(text))
    const validate = ajv.compile(listed.get(name)!.outputSchema!)
    expect({ name, valid: validate(result.structuredContent), errors: validate.errors ?? null }).toEqual({ name, valid: true, errors: null })
    return result.structuredContent
  }

  beforeAll(async () => {
    server = await startTestServer()
    client = await connect(server, await personalKey(server, "outputs@example.com", "admin"))
    const kb = await call(client, "create_knowledgebase", { name: "Handbook" })
    expect(kb.isError).toBe(false)
    await call(client, "save_page", { knowledgebaseId: "Handbook", title: "Refunds", bodyMarkdown: `Refunds are paid within 30 days. ${"More. ".repeat(500)}` })
    await call(client, "upload_source", { knowledgebaseId: "Handbook", name: "policy.md", contentMarkdown: "# Policy\n\nReturns within 30 days." })
    await call(client, "save_agent", { name: "Helper", instructions: "Answer briefly.", knowledgebaseIds: ["Handbook"] })
    await call(client, "publish_agent", { id: "Helper" })
    await call(client, "save_flow", { name: "Greeter", questions: [{ label: "Company name", type: "text", required: true }], steps: [{ type: "template", name: "greeting", template: "Hello {{company_name}}" }] })
    await call(client, "publish_flow", { id: "Greeter" })
    await call(client, "save_app", { name: "Desk", agentIds: ["Helper"] })
    await call(client, "publish_app", { id: "Desk" })
    listed = new Map((await client.listTools()).tools.map((one) => [one.name, one as { title?: string; outputSchema?: JsonSchema }]))
  })

  afterAll(async () => {
    await client.close()
    await server.stop()
  })

  it("lists every tool with its title and its derived output schema, an object", async () => {
    const declared = new Map((await everyTool()).map((candidate) => [candidate.name, candidate]))
    const item = { id: "x", name: "x", description: "" }
    const perItem: Record<string, McpTool> = { agent: agentItemTool(item, "x"), app: appItemTool(item, "x"), flow: flowItemTool(sampleFlow(false), "x") }
    expect(listed.size).toBeGreaterThan(55)
    for (const [name, tool] of listed) {
      const source = declared.get(name) ?? perItem[name.split("_")[0]!]!
      expect({ name, type: tool.outputSchema?.["type"], titled: (tool.title ?? "").length > 2 }).toEqual({ name, type: "object", titled: true })
      expect({ name, outputSchema: tool.outputSchema }).toEqual({ name, outputSchema: source.outputSchema })
    }
    expect(listed.get("agent_helper")!.title).toBe("Agent: Helper")
    expect(listed.get("list_pages")!.title).toBe(declared.get("list_pages")!.operations[0]!.summary)
  })

  it("answers the core and knowledge tools with structured content that matches their schemas", async () => {
    expect(await structured("whoami")).toMatchObject({ role: "admin", connection: { kind: "personal_key" } })
    expect((await structured("search_docs", { query: "idempotency" })).items.length).toBeGreaterThan(0)
    expect(await structured("list_knowledgebases", { fields: ["name"] })).toEqual({ items: [{ name: "Handbook" }], nextCursor: null })
    await structured("get_knowledgebase_outline", { knowledgebaseId: "Handbook" })
    await structured("search_knowledgebase", { knowledgebaseId: "Handbook", query: "refunds", kinds: ["pages"] })
    await structured("list_pages", { knowledgebaseId: "Handbook" })
    expect(await structured("read_page", { knowledgebaseId: "Handbook", pageId: "Refunds" })).toMatchObject({ truncated: true, hint: expect.any(String) })
    await structured("read_page", { knowledgebaseId: "Handbook", pageId: "Refunds", view: "full" })
    await structured("list_sources", { knowledgebaseId: "Handbook", fields: ["name", "status"] })
    await structured("list_changes", { knowledgebaseId: "all" })
    const memory = await structured("remember", { text: "Prefers short answers." })
    await structured("list_memories")
    expect(await structured("forget", { memoryId: memory.memory.id })).toEqual({ ok: true, memoryId: memory.memory.id })
  })

  it("answers the run, authoring and per-item tools with structured content that matches their schemas", async () => {
    const listedAgents = await structured("list_agents")
    expect(listedAgents.items.map((one: { kind: string }) => one.kind)).toEqual(["agent", "app"])
    const turn = await structured("run_agent", { agentId: "Helper", message: "Hello" })
    expect(Object.keys(turn)).toContain("conversationId")
    await structured("run_agent", { agentId: "Desk", message: "Hello" })
    await structured("list_flows")
    await structured("run_flow", { flowId: "Greeter", inputs: { company_name: "Acme" } })
    await structured("get_execution", { executionId: turn.executionId })
    await structured("get_execution", { executionId: turn.executionId, view: "full" })
    expect(await structured("save_agent", { name: "Second" })).toMatchObject({ created: true })
    expect(await structured("save_agent", { agentId: "Second", description: "Two" })).toMatchObject({ created: false })
    await structured("publish_agent", { id: "Second" })
    await structured("run_draft", { kind: "flow", id: "Greeter", inputs: { company_name: "Acme" } })
    await structured("list_authored_flows", { fields: ["name"] })
    await structured("run_test_cases", { kind: "agent", id: "Helper", cases: [{ message: "Hi", expectContains: ["zzz-not-there"] }, { inputs: {} }] })
    await structured("compare_models", { agentId: "Helper", message: "Hi", models: ["builtin", "builtin"] })
    await structured("set_agent_knowledge", { agentId: "Second", knowledgebaseIds: [] })
    await structured("agent_helper", { message: "Hi" })
    await structured("app_desk", { message: "Hi" })
    await structured("flow_greeter", { company_name: "Acme" })
  })

  it("answers the provisioning tools with structured content that matches their schemas", async () => {
    await structured("list_tier_plans")
    await structured("list_portals", { fields: ["id"] })
    const provisioned = await structured("provision_end_user", { email: "reader@example.com", fullName: "Reader" })
    await structured("list_end_users", { fields: ["email"] })
    await structured("get_end_user", { endUserId: "reader@example.com" })
    const group = await structured("create_user_group", { name: "Readers" })
    await structured("add_group_member", { groupId: "Readers", endUserId: provisioned.endUser?.id ?? "reader@example.com", sendEmail: false })
    await structured("list_user_groups")
    await structured("get_user_group", { groupId: group.group.id })
    await structured("update_user_group", { groupId: "Readers", description: "People who read" })
    await structured("revoke_end_user", { endUserId: "reader@example.com" })
  })

  it("gives a failure no structured content, and its schema refuses what the tool does not answer", async () => {
    const result = (await client.callTool({ name: "read_page", arguments: { knowledgebaseId: "Handbook", pageId: "Nowhere" } })) as CallToolResult
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    expect(JSON.parse((result.content[0] as { text: string }).text).error.code).toBe("not_found")
    const validate = ajv.compile(listed.get("forget")!.outputSchema!)
    expect(validate({ ok: true, memoryId: "m" })).toBe(true)
    expect(validate({ ok: true, memoryId: "m", extra: 1 })).toBe(false)
    expect(ajv.compile(listed.get("list_knowledgebases")!.outputSchema!)({ items: [{ name: 1 }], nextCursor: null })).toBe(false)
  })
})
