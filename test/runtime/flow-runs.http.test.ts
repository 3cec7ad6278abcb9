/**
 * Flow runs over HTTP on a real server, with a fake OpenAI-compatible provider on a real socket for
 * `prompt` and `agent` steps and for an Agent calling a Flow as a tool: inputs validated before
 * anything runs or is charged, steps in order binding their variables, a conversational Flow,
 * draft and never-published Flows, credits, a failing provider, and the streamed events.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { expectError, insertKnowledgebases, unknownId } from "../support/fixtures.js"
import { callTool, type FakeOpenAi, say, type SeenRequest } from "../support/fake-openai.js"
import type { TestServer } from "../support/server.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { AccountsService } from "../../server/identity/service.js"
import { FlowRunService } from "../../server/runtime/flow-runs/service.js"
import { builtinPromptNote } from "../../server/runtime/flow-runs/steps.js"
import { count, createAgent, fakeModelSuite, openStream } from "./support.js"
import { eventually } from "../support/timing.js"

let fake: FakeOpenAi
let server: TestServer
let kb: string

const suite = fakeModelSuite({ model: { defaultModel: "fake-model", maxAttempts: 2 } }, async (started) => {
  ;({ fake, server } = started)
  const [made] = await insertKnowledgebases(server, { count: 1, prefix: "Flow runs" })
  kb = made!.id
  await readySource(server, kb, { name: "Shipping guide", markdown: true, text: "# Shipping\n\nParcels to Zanzibarra ship every Tuesday.\n" })
})

const credits = async () => (await organizationOf(server)).creditsRemaining
const executions = () => count(server, "SELECT count(*) AS n FROM executions")
const lastUser = (request: SeenRequest): string =>
  (request.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "user").at(-1)!.content

/** Creates a Flow over HTTP (published unless `publish: false`); answers its id. */
const createFlow = async (body: Record<string, unknown>, options: { publish?: boolean } = {}): Promise<string> => {
  const created = await server.request("POST", "/flows", { body: { name: "Runner flow", questions: [], ...body } })
  expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 })
  const id = created.body.flow.id as string
  if (options.publish !== false) expect((await server.request("POST", `/flows/${id}/publish`)).status).toBe(200)
  return id
}
const run = (flow: string, body: unknown) => server.request("POST", `/flows/${flow}/run`, { body })
const executionOf = async (id: string) => (await server.request("GET", `/executions/${id}`)).body.execution

const leadQuestions = [
  { label: "Company name", type: "text", required: true },
  { label: "Budget", type: "select", options: ["small", "large"], required: true },
  { label: "Email", type: "email" }
]

describe("inputs", () => {
  it("are validated before anything runs: one 400 names every problem, nothing written or charged", async () => {
    const flow = await createFlow({ questions: leadQuestions, steps: [{ type: "template", name: "t", template: "{{company_name}}" }] })
    const before = { credits: await credits(), executions: await executions(), seen: fake.requests.length }
    const refused = await run(flow, { inputs: { budget: "huge", email: "not-an-email", extra: 1 }, message: "hi" })
    const message = expectError(refused, 400, "invalid_request")
    for (const named of ["inputs.company_name", "inputs.budget", "inputs.email", "inputs.extra", "message"]) expect(message).toContain(named)
    expect(await credits()).toBe(before.credits)
    expect(await executions()).toBe(before.executions)
    expect(fake.requests.length).toBe(before.seen)
  })
})

describe("steps", () => {
  it("template and search steps bind their variables in order; the output renders them; one credit", async () => {
    const flow = await createFlow({
      questions: [{ label: "Topic", type: "text", required: true }],
      steps: [
        { type: "search", name: "found", query: "{{topic}}", knowledgebaseIds: [kb] },
        { type: "search", name: "nowhere", query: "{{topic}}" },
        { type: "template", name: "summary", template: "About {{topic}}:\n{{found}}" }
      ],
      output: "{{summary}}|{{nowhere}}|"
    })
    const before = await credits()
    const answered = await run(flow, { inputs: { topic: "Zanzibarra" } })
    expect(answered.status).toBe(200)
    const { executionId, output, variables } = answered.body
    expect(Object.keys(variables)).toEqual(["found", "nowhere", "summary"])
    expect(variables.found).toMatch(/^\[1\] Shipping guide\n> .*Tuesday/)
    expect(variables.nowhere).toBe("")
    expect(variables.summary).toBe(`About Zanzibarra:\n${variables.found}`)
    expect(output).toBe(`${variables.summary}||`)
    expect(await credits()).toBe(before - 1)
    const execution = await executionOf(executionId)
    expect(execution).toMatchObject({ kind: "flow", targetId: flow, version: 1, draft: false, conversationId: null, status: "succeeded", creditsCharged: 1 })
    expect(execution.steps.map((step: any) => [step.type, step.name])).toEqual([["search", "found"], ["search", "nowhere"], ["template", "summary"]])
    expect(execution.toolsCalled).toEqual([{ name: "search_knowledgebases", arguments: { query: "Zanzibarra" } }])
  })

  it("an agent step asks the published Agent one turn within the same execution (no extra credit)", async () => {
    const agent = await createAgent(server, { name: "Helper", instructions: "Be brief.", model: "fake-model" })
    suite.answer = (request) => say(`agent heard: ${lastUser(request)}`)
    const flow = await createFlow({
      questions: [{ label: "Topic", type: "text", required: true }],
      steps: [{ type: "agent", name: "asked", agentId: agent, message: "Tell me about {{topic}}" }]
    })
    const before = await credits()
    const seen = fake.requests.length
    const answered = await run(flow, { inputs: { topic: "tea" } })
    expect(answered.status).toBe(200)
    expect(answered.body.output).toBe("agent heard: Tell me about tea")
    expect(answered.body.variables).toEqual({ asked: "agent heard: Tell me about tea" })
    expect(fake.requests[seen]!.body.messages[0]).toEqual({ role: "system", content: "Be brief." })
    expect(await credits()).toBe(before - 1)
    const execution = await executionOf(answered.body.executionId)
    expect(execution.steps.map((step: any) => step.type)).toEqual(["model", "agent"])
  })

  it("an agent step whose Agent was deleted since the Flow was published fails the run naming the step; nothing charged", async () => {
    const agent = await createAgent(server, { name: "Leaving", model: "fake-model" })
    const flow = await createFlow({ steps: [{ type: "agent", name: "asked", agentId: agent, message: "{{message}}" }] })
    expect((await server.request("DELETE", `/agents/${agent}`)).status).toBe(200)
    const before = await credits()
    const message = expectError(await run(flow, { message: "hi" }), 502, "run_failed")
    expect(message).toContain("Step asked")
    expect(await credits()).toBe(before)
  })

  it("a prompt step calls its model; with the builtin model it echoes its prompt, marked as such", async () => {
    suite.answer = (request) => say(`model saw: ${lastUser(request)}`)
    const flow = await createFlow({
      questions: [{ label: "Topic", type: "text", required: true }],
      steps: [
        { type: "prompt", name: "written", template: "Write about {{topic}}" },
        { type: "prompt", name: "echoed", template: "Echo {{topic}}", model: "builtin" }
      ],
      output: "{{written}}\n{{echoed}}"
    })
    const answered = await run(flow, { inputs: { topic: "tea" } })
    expect(answered.status).toBe(200)
    expect(answered.body.variables).toEqual({ written: "model saw: Write about tea", echoed: `${builtinPromptNote}\nEcho tea` })
  })

  it("a failing prompt step (provider 5xx) is 502 run_failed, the execution failed, nothing charged", async () => {
    suite.answer = () => ({ status: 500, error: "upstream exploded" })
    const flow = await createFlow({
      questions: [{ label: "Topic", type: "text", required: true }],
      steps: [{ type: "prompt", name: "written", template: "Write about {{topic}}" }]
    })
    const before = await credits()
    expectError(await run(flow, { inputs: { topic: "tea" } }), 502, "run_failed")
    expect(await credits()).toBe(before)
    expect(await count(server, "SELECT count(*) AS n FROM executions WHERE target_id = ? AND status = 'failed' AND credits_charged = 0", [flow])).toBe(1)
    expect(await count(server, "SELECT count(*) AS n FROM executions WHERE status = 'running'")).toBe(0)
  })
})

describe("a Flow without questions", () => {
  it("is called like an Agent: message and conversation_id, history kept, a conversation of kind flow", async () => {
    const flow = await createFlow({ steps: [{ type: "template", name: "echo", template: "You said: {{message}}" }] })
    const first = await run(flow, { message: "hello" })
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ reply: "You said: hello", conversation_id: expect.any(String), executionId: expect.any(String) })
    const second = await run(flow, { message: "again", conversation_id: first.body.conversation_id })
    expect(second.body).toMatchObject({ reply: "You said: again", conversation_id: first.body.conversation_id })
    const conversation = await server.request("GET", `/conversations/${first.body.conversation_id}`)
    expect(conversation.body.conversation).toMatchObject({ targetKind: "flow", targetId: flow })
    const messages = await server.request("GET", `/conversations/${first.body.conversation_id}/messages`)
    expect(messages.body.messages.map((m: any) => [m.role, m.text])).toEqual([
      ["user", "hello"],
      ["assistant", "You said: hello"],
      ["user", "again"],
      ["assistant", "You said: again"]
    ])
    expect((await executionOf(second.body.executionId)).conversationId).toBe(first.body.conversation_id)
  })

  it("refuses inputs, a missing message, and a conversation of another target, writing nothing", async () => {
    const flow = await createFlow({ steps: [{ type: "template", name: "echo", template: "{{message}}" }] })
    const agent = await createAgent(server, { model: "builtin" })
    const agentTalk = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "hi" } })
    const before = { credits: await credits(), executions: await executions() }
    const refused = expectError(await run(flow, { inputs: { a: 1 } }), 400, "invalid_request")
    expect(refused).toContain("inputs:")
    expect(refused).toContain("message:")
    expectError(await run(flow, { message: "hi", conversation_id: agentTalk.body.conversation_id }), 404, "not_found")
    expectError(await run(flow, { message: "hi", conversation_id: unknownId() }), 404, "not_found")
    expect(await credits()).toBe(before.credits)
    expect(await executions()).toBe(before.executions)
  })
})

describe("which version runs", () => {
  it("a never-published Flow is 404 to /run; /draft/run runs the draft", async () => {
    const flow = await createFlow({ steps: [{ type: "template", name: "echo", template: "draft: {{message}}" }] }, { publish: false })
    expectError(await run(flow, { message: "hi" }), 404, "not_found")
    expectError(await run(unknownId(), { message: "hi" }), 404, "not_found")
    const drafted = await server.request("POST", `/flows/${flow}/draft/run`, { body: { message: "hi" } })
    expect(drafted.status).toBe(200)
    expect(drafted.body.reply).toBe("draft: hi")
    expect(await executionOf(drafted.body.executionId)).toMatchObject({ draft: true, version: null, status: "succeeded" })
  })

  it("a run uses the published version, not a later draft edit", async () => {
    const flow = await createFlow({ steps: [{ type: "template", name: "echo", template: "v1 {{message}}" }] })
    const edited = await server.request("PATCH", `/flows/${flow}/draft`, { body: { steps: [{ type: "template", name: "echo", template: "v2 {{message}}" }] } })
    expect(edited.status).toBe(200)
    expect((await run(flow, { message: "x" })).body.reply).toBe("v1 x")
  })
})

describe("credits", () => {
  it("at zero credits a run is 402 and nothing is written", async () => {
    const flow = await createFlow({ steps: [{ type: "template", name: "echo", template: "{{message}}" }] })
    await setCredits(server, 0)
    const before = await executions()
    expectError(await run(flow, { message: "hi" }), 402, "insufficient_credits")
    expect(await executions()).toBe(before)
    expect(await credits()).toBe(0)
  })
})

describe("streaming", () => {
  it("sends start, a tool event per step, the output as a delta, then one done carrying the answer", async () => {
    const flow = await createFlow({
      questions: [{ label: "Name", type: "text", required: true }],
      steps: [
        { type: "template", name: "greeting", template: "Hello {{name}}" },
        { type: "template", name: "shout", template: "{{greeting}}!" }
      ]
    })
    const streamed = await openStream(server, `/flows/${flow}/run`, { inputs: { name: "Ada" }, stream: true })
    expect(streamed.response.headers.get("content-type")).toContain("text/event-stream")
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(events.map((e) => e.event)).toEqual(["start", "tool", "tool", "delta", "done"])
    expect(events[0]!.data).toEqual({ executionId: expect.any(String) })
    expect(events.slice(1, 3).map((e) => e.data)).toEqual([{ name: "greeting" }, { name: "shout" }])
    expect(events[3]!.data).toEqual({ text: "Hello Ada!" })
    expect(events[4]!.data).toEqual({ executionId: events[0]!.data.executionId, output: "Hello Ada!", variables: { greeting: "Hello Ada", shout: "Hello Ada!" } })
  })

  it("a failing step streams start, its tool event, then one error; nothing charged", async () => {
    suite.answer = () => ({ status: 503, error: "busy" })
    const flow = await createFlow({ steps: [{ type: "prompt", name: "written", template: "{{message}}" }] })
    const before = await credits()
    const streamed = await openStream(server, `/flows/${flow}/run`, { message: "hi", stream: true })
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(events.map((e) => e.event)).toEqual(["start", "tool", "error"])
    expect(events[0]!.data).toEqual({ executionId: expect.any(String), conversation_id: expect.any(String) })
    expect(events[2]!.data.error.code).toBe("run_failed")
    expect(await credits()).toBe(before)
  })
})

describe("a client that disconnects", () => {
  it("leaves the run going (issue 25): the prompt step finishes, the execution succeeds, charged once, its reply stored", async () => {
    suite.answer = () => ({ parts: [{ kind: "text", text: "partial" }, { kind: "wait", ms: 300 }, { kind: "text", text: " story" }] })
    const flow = await createFlow({ steps: [{ type: "prompt", name: "written", template: "{{message}}" }] })
    const before = await credits()
    const aborted = fake.aborted.length
    const controller = new AbortController()
    const streamed = await openStream(server, `/flows/${flow}/run`, { message: "a long story", stream: true }, controller.signal)
    const start = await streamed.next()
    expect(start!.event).toBe("start")
    expect(await streamed.next()).toEqual({ event: "tool", data: { name: "written" } })
    await eventually(async () => fake.requests.some((request) => lastUser(request) === "a long story"))
    controller.abort()
    const executionId = start!.data.executionId as string
    await eventually(async () => (await executionOf(executionId)).status !== "running")
    expect(await executionOf(executionId)).toMatchObject({ status: "succeeded", creditsCharged: 1, error: null })
    expect(await credits()).toBe(before - 1)
    expect(fake.aborted.length).toBe(aborted)
    const messages = await server.request("GET", `/conversations/${start!.data.conversation_id}/messages`)
    expect(messages.body.messages.map((m: any) => [m.role, m.text])).toEqual([
      ["user", "a long story"],
      ["assistant", "partial story"]
    ])
  })
})

describe("the last credit", () => {
  it("of concurrent runs, exactly one runs; the others are 402 with nothing of theirs written", async () => {
    const flow = await createFlow({ steps: [{ type: "template", name: "echo", template: "{{message}}" }] })
    await setCredits(server, 1)
    const before = await executions()
    const answers = await Promise.all([1, 2, 3, 4].map((i) => run(flow, { message: `run ${i}` })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402, 402, 402])
    expect(await executions()).toBe(before + 1)
    expect(await credits()).toBe(0)
  })

  it("runs that all passed their checks with one credit left: exactly one is reserved, the others are refused before writing", async () => {
    const flow = await createFlow({ steps: [{ type: "template", name: "echo", template: "{{message}}" }] })
    await setCredits(server, 1)
    const before = await executions()
    const exits = await server.admin(
      Effect.gen(function* () {
        const actor = yield* Effect.flatMap(AccountsService, (accounts) => accounts.authenticate(server.key))
        const runs = yield* FlowRunService
        const prepared = yield* Effect.forEach([1, 2, 3], (i) => runs.prepareFlowRun(actor, flow, { message: `run ${i}` }, { draft: false }))
        return yield* Effect.forEach(prepared, (prepared) => Effect.exit(runs.runFlow(prepared)), { concurrency: "unbounded" })
      })
    )
    expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
    const refusals = exits.filter(Exit.isFailure).map((exit) => JSON.stringify(exit.cause))
    expect(refusals).toHaveLength(2)
    for (const refusal of refusals) expect(refusal).toContain("insufficient_credits")
    expect(await credits()).toBe(0)
    expect(await executions()).toBe(before + 1)
  })
})

describe("Flows as an Agent's tools", () => {
  it("offers each published Flow as flow_<name> with its inputs schema, and the tool result is the Flow's output", async () => {
    const questions = [{ label: "Company name", type: "text", required: true }]
    const scorer = await createFlow({ name: "Lead Score!", questions, steps: [{ type: "template", name: "score", template: "Score for {{company_name}}: A" }] })
    const twin = await createFlow({ name: "lead score", questions, steps: [{ type: "template", name: "score", template: "twin" }] })
    const unpublished = await createFlow({ name: "Hidden", questions, steps: [{ type: "template", name: "score", template: "x" }] }, { publish: false })
    const chat = await createFlow({ name: "Ünïcode chat", steps: [{ type: "template", name: "echo", template: "{{message}}" }] })
    const agent = await createAgent(server, { name: "Qualifier", model: "fake-model", flowIds: [scorer, twin, unpublished, chat] })
    suite.answer = (request) => {
      const tool = request.body.messages.find((m: any) => m.role === "tool")
      return tool ? say(`Flow said: ${tool.content}`) : callTool("flow_lead_score", { company_name: "Acme" })
    }
    const before = await credits()
    const seen = fake.requests.length
    const talked = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "Score Acme" } })
    expect(talked.status).toBe(200)
    expect(talked.body.reply).toBe("Flow said: Score for Acme: A")
    const offered = fake.requests[seen]!.body.tools.map((tool: any) => tool.function)
    expect(offered.map((tool: any) => tool.name)).toEqual(["flow_lead_score", "flow_lead_score_2", "flow_unicode_chat"])
    expect(offered[2].parameters).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] })
    expect(offered[0].parameters).toMatchObject({
      type: "object",
      properties: { company_name: { type: "string", minLength: 1 } },
      required: ["company_name"],
      additionalProperties: false
    })
    const execution = await executionOf(talked.body.executionId)
    expect(execution.toolsCalled).toEqual([{ name: "flow_lead_score", arguments: { company_name: "Acme" } }])
    expect(await credits()).toBe(before - 1)
  })
})
