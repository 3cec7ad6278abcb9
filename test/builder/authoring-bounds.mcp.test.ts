/**
 * The authoring tools take REST's bounds (issue 22): `save_agent`, `save_flow` and `save_app` take
 * `greeting`, a Flow's `questions`, `steps` and `output`, an App's `api` and the length of their id
 * lists from `POST /agents`, `/flows`, `/apps` and their draft updates. At each bound the save
 * succeeds over MCP and REST; one past it, MCP refuses the argument before anything runs and REST
 * answers `invalid_request` naming the field, and nothing is created. What REST takes and MCP used to
 * refuse (a `null` greeting, a `null` schema of the Transaction Service) MCP takes too.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, insertKnowledgebases } from "../support/fixtures.js"
import { call, connect, personalKey } from "../support/mcp.js"
import { expectArgumentRefused } from "../support/mcp-arguments.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { count } from "../runtime/support.js"

let server: TestServer
let client: Client

const rows = async (table: "agents" | "flows" | "apps") => count(server, `SELECT count(*) AS n FROM ${table}`)

/** `n` questions with distinct labels. */
const questions = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `Question ${i}`, type: "text" }))
/** `n` template steps, each binding its own variable. */
const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "template", name: `step_${i}`, template: "Hello" }))

beforeAll(async () => {
  server = await startTestServer()
  client = await connect(server, await personalKey(server, "author@example.com", "admin"))
})

afterAll(async () => {
  await client.close()
  await server.stop()
})

describe("greeting", () => {
  it("takes null (no greeting) and 2,000 characters over both doors, and refuses 2,001 over both, creating nothing", async () => {
    expect(await call(client, "save_agent", { name: "Quiet", greeting: null })).toMatchObject({ isError: false, body: { created: true, agent: { greeting: null } } })
    expect(await call(client, "save_app", { name: "Quiet app", greeting: null })).toMatchObject({ isError: false, body: { created: true, app: { greeting: null } } })
    const long = "g".repeat(2000)
    expect(await call(client, "save_agent", { name: "Chatty", greeting: long })).toMatchObject({ isError: false, body: { agent: { greeting: long } } })
    expect((await server.request("POST", "/agents", { body: { name: "Quiet REST", greeting: null } })).status).toBe(201)

    const before = { agents: await rows("agents"), apps: await rows("apps") }
    expectArgumentRefused(await call(client, "save_agent", { name: "Too chatty", greeting: `${long}g` }), "save_agent", "greeting", "<=2000 characters")
    expectArgumentRefused(await call(client, "save_app", { name: "Too chatty", greeting: `${long}g` }), "save_app", "greeting", "<=2000 characters")
    expect(expectError(await server.request("POST", "/agents", { body: { name: "Too chatty", greeting: `${long}g` } }), 400, "invalid_request")).toContain("greeting")
    expect({ agents: await rows("agents"), apps: await rows("apps") }).toEqual(before)
  })
})

describe("a Flow's questions, steps and output", () => {
  it("takes 50 questions, 20 steps and a 20,000-character output, and refuses one more of each over both doors, creating nothing", async () => {
    const atBounds = { questions: questions(50), steps: steps(20), output: "o".repeat(20_000) }
    expect(await call(client, "save_flow", { name: "Full", ...atBounds })).toMatchObject({ isError: false, body: { created: true } })
    expect((await server.request("POST", "/flows", { body: { name: "Full REST", ...atBounds } })).status).toBe(201)

    const before = await rows("flows")
    const past = [
      ["questions", { questions: questions(51), steps: steps(1) }, "<=50 items"],
      ["steps", { questions: [], steps: steps(21) }, "<=20 items"],
      ["output", { questions: [], steps: steps(1), output: "o".repeat(20_001) }, "<=20000 characters"]
    ] as const
    for (const [field, body, detail] of past) {
      expectArgumentRefused(await call(client, "save_flow", { name: "Too much", ...body }), "save_flow", field, detail)
      expect(expectError(await server.request("POST", "/flows", { body: { name: "Too much", ...body } }), 400, "invalid_request")).toContain(field)
    }
    expectArgumentRefused(await call(client, "save_flow", { name: "Bad label", questions: [{ label: "", type: "text" }] }), "save_flow", "questions[0].label", ">=1 characters")
    expect(await rows("flows")).toBe(before)
  })

  it("takes a null output on an update, as REST's draft update does", async () => {
    const saved = await call(client, "save_flow", { name: "Resettable", questions: [], steps: steps(1), output: "{{step_0}}!" })
    expect(saved.isError).toBe(false)
    expect(await call(client, "save_flow", { flowId: "Resettable", output: null })).toMatchObject({ isError: false, body: { created: false, flow: { output: null } } })
  })
})

describe("an App's Transaction Service", () => {
  it("takes a null input schema (none) as REST's draft update does", async () => {
    const app = await call(client, "save_app", { name: "Till" })
    expect(app.isError).toBe(false)
    const saved = await call(client, "save_app", { appId: "Till", api: { transactionEnabled: false, inputSchema: null } })
    expect(saved).toMatchObject({ isError: false, body: { created: false } })
    const rest = await server.request("PATCH", `/apps/${app.body.app.id}/draft`, { body: { api: { inputSchema: null } } })
    expect(rest.status).toBe(200)
  })
})

describe("id lists", () => {
  it("take 50 Knowledgebases by id or name and refuse 51 over both doors, creating nothing", async () => {
    const knowledgebases = await insertKnowledgebases(server, { count: 51, prefix: "Shelf" })
    const ids = knowledgebases.map((one) => one.id)
    const names = knowledgebases.map((one) => one.name)
    const saved = await call(client, "save_agent", { name: "Reader", knowledgebaseIds: names.slice(0, 50) })
    expect(saved).toMatchObject({ isError: false, body: { created: true } })
    expect(saved.body.agent.knowledgebaseIds).toEqual(ids.slice(0, 50))

    const before = await rows("agents")
    expectArgumentRefused(await call(client, "save_agent", { name: "Hoarder", knowledgebaseIds: names }), "save_agent", "knowledgebaseIds", "<=50 items")
    expectArgumentRefused(await call(client, "save_app", { name: "Hoarder", flowIds: ids }), "save_app", "flowIds", "<=50 items")
    expect(expectError(await server.request("POST", "/agents", { body: { name: "Hoarder", knowledgebaseIds: ids } }), 400, "invalid_request")).toContain("knowledgebaseIds")
    expect(await rows("agents")).toBe(before)
  })
})
