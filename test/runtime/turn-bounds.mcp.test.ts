/**
 * A turn's `message` has one bound, REST's (issue 22): `ConversationTurn` and `FlowRunRequest` take 1
 * to 32,000 characters, and every MCP tool that sends a turn (`run_agent`, `agent_<name>`,
 * `run_flow`, `flow_<name>` of a Flow without questions, `run_draft`) takes its `message` from those
 * operations. At the bound the turn runs; one character past it, MCP refuses the argument before
 * anything runs and REST answers `invalid_request` naming `message`, and neither writes an execution
 * or a conversation. `get_execution` takes REST's `id` as it is too (no bound of its own).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maxMessageChars } from "../../server/runtime/runs/domain.js"
import { expectError, unknownId } from "../support/fixtures.js"
import { call, connect, personalKey } from "../support/mcp.js"
import { expectArgumentRefused } from "../support/mcp-arguments.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { count, createAgent } from "./support.js"

let server: TestServer
let client: Client
let agentId: string
let flowId: string

const atBound = "a".repeat(maxMessageChars)
const pastBound = "a".repeat(maxMessageChars + 1)
const tooLong = `<=${maxMessageChars} characters`

/** What a refused turn must leave as it was: executions and conversations. */
const written = async () => ({
  executions: await count(server, "SELECT count(*) AS n FROM executions"),
  conversations: await count(server, "SELECT count(*) AS n FROM conversations")
})

beforeAll(async () => {
  server = await startTestServer()
  client = await connect(server, await personalKey(server, "bounds@example.com", "admin"))
  agentId = await createAgent(server, { name: "Bounded", instructions: "Answer briefly." })
  const flow = await server.request("POST", "/flows", {
    body: { name: "Echo", questions: [], steps: [{ type: "template", name: "echo", template: "You said {{message}}" }] }
  })
  expect(flow.status).toBe(201)
  flowId = flow.body.flow.id
  expect((await server.request("POST", `/flows/${flowId}/publish`)).status).toBe(200)
})

afterAll(async () => {
  await client.close()
  await server.stop()
})

describe("a turn's message over MCP and REST", () => {
  it("runs an Agent at 32,000 characters and refuses 32,001 the same way over run_agent, agent_<name> and REST, writing nothing", async () => {
    const before = await written()
    const ran = await call(client, "run_agent", { agentId: "Bounded", message: atBound })
    expect(ran).toMatchObject({ isError: false, body: { reply: expect.any(String), conversationId: expect.any(String) } })
    expect(await call(client, "agent_bounded", { message: atBound })).toMatchObject({ isError: false, body: { reply: expect.any(String) } })
    const after = await written()
    expect(after).toEqual({ executions: before.executions + 2, conversations: before.conversations + 2 })

    expectArgumentRefused(await call(client, "run_agent", { agentId: "Bounded", message: pastBound }), "run_agent", "message", tooLong)
    expectArgumentRefused(await call(client, "agent_bounded", { message: pastBound }), "agent_bounded", "message", tooLong)
    expectArgumentRefused(await call(client, "run_draft", { kind: "agent", id: "Bounded", message: pastBound }), "run_draft", "message", tooLong)
    const rest = await server.request("POST", `/agents/${agentId}/conversation`, { body: { message: pastBound } })
    expect(expectError(rest, 400, "invalid_request")).toContain("message")
    expect(await written()).toEqual(after)
  })

  it("runs a Flow without questions at 32,000 characters and refuses 32,001 the same way over run_flow, flow_<name> and REST, writing nothing", async () => {
    const before = await written()
    expect(await call(client, "run_flow", { flowId: "Echo", message: atBound })).toMatchObject({ isError: false, body: { reply: `You said ${atBound}` } })
    expect(await call(client, "flow_echo", { message: atBound })).toMatchObject({ isError: false, body: { reply: `You said ${atBound}` } })
    const after = await written()
    expect(after).toEqual({ executions: before.executions + 2, conversations: before.conversations + 2 })

    expectArgumentRefused(await call(client, "run_flow", { flowId: "Echo", message: pastBound }), "run_flow", "message", tooLong)
    expectArgumentRefused(await call(client, "flow_echo", { message: pastBound }), "flow_echo", "message", tooLong)
    const rest = await server.request("POST", `/flows/${flowId}/run`, { body: { message: pastBound } })
    expect(expectError(rest, 400, "invalid_request")).toContain("message")
    expect(await written()).toEqual(after)
  })

  it("publishes the operation's bound as each tool's input schema", async () => {
    const tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.inputSchema]))
    for (const name of ["run_agent", "agent_bounded", "run_flow", "flow_echo", "run_draft", "compare_models"]) {
      expect({ name, message: (tools.get(name)?.properties as Record<string, unknown> | undefined)?.["message"] }).toMatchObject({
        name,
        message: { type: "string", minLength: 1, maxLength: maxMessageChars }
      })
    }
  })
})

describe("an execution's id over MCP and REST", () => {
  it("takes REST's unbounded `id`: an empty one names no execution, answered not_found as REST answers an unknown one", async () => {
    const empty = await call(client, "get_execution", { executionId: "" })
    expect(empty).toEqual({ isError: true, body: { error: { code: "not_found", message: expect.any(String) } } })
    expectError(await server.request("GET", `/executions/${unknownId()}`), 404, "not_found")
  })
})
