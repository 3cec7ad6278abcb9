/**
 * The draft checks of the MCP authoring family on a real server: `set_agent_knowledge` (the
 * draft's Knowledgebases, by name, refused for an unknown one with nothing written),
 * `run_test_cases` (draft runs of an Agent and a Flow checked for expected text, a case that cannot
 * run reported beside the others, one credit a case) and `compare_models` (the builtin model and a
 * fake OpenAI-compatible one answering the same message), and who is offered them.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenAi, say, startFakeOpenAi } from "../support/fake-openai.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { call, connect, personalKey, toolNames } from "../support/mcp.js"

let server: TestServer
let fake: FakeOpenAi
let member: Client
const credits = async () => (await organizationOf(server)).creditsRemaining

beforeAll(async () => {
  fake = await startFakeOpenAi(() => say("Refunds take 30 days, says the model."))
  server = await startTestServer({ server: { model: { baseUrl: fake.baseUrl, defaultModel: "builtin", backoffMs: 1, maxAttempts: 1 } } })
  await setCredits(server, 1_000)
  member = await connect(server, await personalKey(server, "checker@example.com", "member"))
  await call(member, "create_knowledgebase", { name: "Handbook" })
  await call(member, "save_page", { knowledgebaseId: "Handbook", title: "Refunds", bodyMarkdown: "Refunds are paid within 30 days of a return." })
  await call(member, "save_agent", { name: "Desk", instructions: "Answer from the handbook." })
  await call(member, "save_flow", {
    name: "Echo",
    questions: [{ label: "Topic", type: "text", required: true }],
    steps: [{ type: "template", name: "said", template: "About {{topic}}" }]
  })
})
afterAll(async () => {
  await member.close()
  await server.stop()
  await fake.close()
})

describe("draft checks over MCP", () => {
  it("are offered to members with the authoring family and not to viewers", async () => {
    expect(await toolNames(member)).toEqual(expect.arrayContaining(["compare_models", "run_test_cases", "set_agent_knowledge"]))
    const viewer = await connect(server, await personalKey(server, "looker@example.com", "viewer"))
    expect(await toolNames(viewer)).not.toContain("run_test_cases")
    await viewer.close()
  })

  it("set_agent_knowledge sets the draft's Knowledgebases by name, and refuses an unknown one writing nothing", async () => {
    const set = await call(member, "set_agent_knowledge", { agentId: "Desk", knowledgebaseIds: ["Handbook"] })
    expect(set.isError).toBe(false)
    expect(set.body.agent.knowledgebaseIds).toHaveLength(1)
    const refused = await call(member, "set_agent_knowledge", { agentId: "Desk", knowledgebaseIds: ["Nowhere"] })
    expect(refused).toMatchObject({ isError: true, body: { error: { code: "not_found" } } })
    expect((await call(member, "list_authored_agents", { fields: ["name"] })).body.items).toEqual([{ name: "Desk" }])
    const draft = await server.request("GET", `/agents/${set.body.agent.id}/draft`)
    expect(draft.body.agent.knowledgebaseIds).toEqual(set.body.agent.knowledgebaseIds)
  })

  it("run_test_cases runs each case on the draft, checks the answers and reports a case that cannot run; one credit a case run", async () => {
    const before = await credits()
    const ran = await call(member, "run_test_cases", {
      kind: "agent",
      id: "Desk",
      cases: [
        { name: "refund window", message: "How long do refunds take?", expectContains: ["30 days"] },
        { message: "How long do refunds take?", expectContains: ["60 days"], expectNotContains: ["refund"] },
        { name: "no message" }
      ]
    })
    expect(ran.isError).toBe(false)
    expect(ran.body).toMatchObject({ passed: 1, failed: 2 })
    expect(ran.body.cases[0]).toMatchObject({ name: "refund window", passed: true, failures: [], executionId: expect.any(String) })
    expect(ran.body.cases[1]).toMatchObject({ name: "case 2", passed: false, failures: ['does not contain "60 days"', 'contains "refund"'] })
    expect(ran.body.cases[2]).toMatchObject({ name: "no message", passed: false, error: { code: "invalid_request" } })
    expect(await credits()).toBe(before - 2)
    const flow = await call(member, "run_test_cases", { kind: "flow", id: "Echo", cases: [{ inputs: { topic: "chairs" }, expectContains: ["About chairs"] }, { inputs: {} }] })
    expect(flow.body).toMatchObject({ passed: 1, failed: 1, cases: [{ passed: true }, { error: { code: "invalid_request" } }] })
  })

  it("compare_models answers the same message under each model, the draft's model untouched", async () => {
    const compared = await call(member, "compare_models", { agentId: "Desk", message: "How long do refunds take?", models: ["builtin", "fake-model"] })
    expect(compared.isError).toBe(false)
    const [builtin, model] = compared.body.results
    expect(builtin).toMatchObject({ model: "builtin", executionId: expect.any(String) })
    expect(builtin.reply).toContain("30 days")
    expect(model).toMatchObject({ model: "fake-model", reply: "Refunds take 30 days, says the model." })
    expect(fake.requests.at(-1)!.body.model).toBe("fake-model")
    const agentId = compared.body.agentId as string
    expect((await server.request("GET", `/agents/${agentId}/draft`)).body.agent.model).toBe("builtin")
    const short = await call(member, "compare_models", { agentId: "Desk", message: "hi", models: ["builtin"] })
    expect(short.isError).toBe(true)
  })
})
