/**
 * App runs over HTTP on a real server: the greeting on a conversation's first turn only, the
 * `builtin` Supervisor routing by description between two Agents on different Knowledgebases,
 * members running at the versions the App pinned (seen in the system prompt a fake
 * OpenAI-compatible provider received), transactions (input refused naming every problem, output
 * schema mismatch 502, a valid one), 402, the `apps` gate and other organizations; then the
 * Supervisor on a language model, routing through `ask_<name>` tools.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, insertKnowledgebases, unknownId } from "../support/fixtures.js"
import { callTool, type FakeOpenAi, type FakeResponse, say, type SeenRequest, startFakeOpenAi } from "../support/fake-openai.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { count, createAgent, fakeModelSuite, openStream } from "./support.js"

let fake: FakeOpenAi
let server: TestServer
let otherKey: string
let shipping: string
let billing: string

const systemPrompt = (request: SeenRequest): string => request.body.messages.find((m: any) => m.role === "system")?.content ?? ""

/** Creates an App over HTTP with `body` (and `api` set on its draft), published unless `publish: false`; answers its id. */
const createApp = async (
  target: TestServer,
  body: Record<string, unknown>,
  options: { publish?: boolean; api?: Record<string, unknown> } = {}
): Promise<string> => {
  const created = await target.request("POST", "/apps", { body: { name: "Desk", ...body } })
  expect(created.status).toBe(201)
  const id = created.body.app.id as string
  if (options.api !== undefined) expect((await target.request("PATCH", `/apps/${id}/draft`, { body: { api: options.api } })).status).toBe(200)
  if (options.publish !== false) expect((await target.request("POST", `/apps/${id}/publish`)).status).toBe(200)
  return id
}

/** Creates and publishes a Flow over HTTP; answers its id. */
const createFlow = async (target: TestServer, body: Record<string, unknown>): Promise<string> => {
  const created = await target.request("POST", "/flows", { body: { questions: [], ...body } })
  expect(created.status).toBe(201)
  const id = created.body.flow.id as string
  expect((await target.request("POST", `/flows/${id}/publish`)).status).toBe(200)
  return id
}

const credits = async (target: TestServer = server) => (await organizationOf(target)).creditsRemaining
const executions = (target: TestServer = server) => count(target, "SELECT count(*) AS n FROM executions")
const execution = async (target: TestServer, id: string) => (await target.request("GET", `/executions/${id}`)).body.execution

const suite = fakeModelSuite({ model: { defaultModel: "builtin", maxAttempts: 1 } }, async (started) => {
  ;({ fake, server } = started)
  otherKey = await server.createOrganization("other")
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("other", { enable: ["apps"] })))
  const [shippingKb, billingKb] = await insertKnowledgebases(server, { count: 2, prefix: "Desk" })
  await readySource(server, shippingKb!.id, { name: "Shipping guide", markdown: true, text: "# Shipping\n\nParcels ship every Tuesday from the Leeds depot.\n" })
  await readySource(server, billingKb!.id, { name: "Billing guide", markdown: true, text: "# Invoices\n\nInvoices are due within 30 days of issue.\n" })
  shipping = await createAgent(server, {
    name: "Shipping desk",
    description: "Answers questions about parcels, delivery and shipping.",
    knowledgebaseIds: [shippingKb!.id]
  })
  billing = await createAgent(server, {
    name: "Billing desk",
    description: "Answers questions about invoices, payments and refunds.",
    knowledgebaseIds: [billingKb!.id]
  })
})

describe("conversations", () => {
  it("answers the greeting on the first turn only, keeps the history in an App conversation, one execution and credit per turn", async () => {
    const app = await createApp(server, { greeting: "Welcome to the desk.", agentIds: [shipping, billing] })
    const before = await credits()
    const first = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "When do parcels ship?" } })
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ reply: expect.stringContaining("Tuesday"), conversation_id: expect.any(String), greeting: "Welcome to the desk.", executionId: expect.any(String) })
    const second = await server.request("POST", `/apps/${app}/conversation`, {
      body: { message: "And invoices?", conversation_id: first.body.conversation_id }
    })
    expect(second.status).toBe(200)
    expect(second.body.greeting).toBeNull()
    expect(second.body.conversation_id).toBe(first.body.conversation_id)
    expect(await credits()).toBe(before - 2)
    const conversation = (await server.request("GET", `/conversations/${first.body.conversation_id}`)).body.conversation
    expect(conversation).toMatchObject({ targetKind: "app", targetId: app })
    const messages = (await server.request("GET", `/conversations/${first.body.conversation_id}/messages`)).body.messages
    expect(messages.map((m: any) => [m.role, m.executionId])).toEqual([
      ["user", first.body.executionId],
      ["assistant", first.body.executionId],
      ["user", second.body.executionId],
      ["assistant", second.body.executionId]
    ])
    expect(await execution(server, first.body.executionId)).toMatchObject({
      kind: "app",
      targetId: app,
      version: 1,
      draft: false,
      conversationId: first.body.conversation_id,
      status: "succeeded",
      creditsCharged: 1
    })
  })

  it("a conversation of an Agent (or of another App) is not_found to an App, and nothing is charged", async () => {
    const app = await createApp(server, { agentIds: [shipping] })
    const agentTurn = await server.request("POST", `/agents/${shipping}/conversation`, { body: { message: "hi" } })
    const before = [await credits(), await executions()]
    expectError(
      await server.request("POST", `/apps/${app}/conversation`, { body: { message: "hi", conversation_id: agentTurn.body.conversation_id } }),
      404,
      "not_found"
    )
    expect([await credits(), await executions()]).toEqual(before)
  })

  it("runs concurrent turns of one App conversation one at a time, none lost or interleaved", async () => {
    const slow = await createAgent(server, { name: "Slow desk", model: "fake-model" })
    const app = await createApp(server, { agentIds: [slow] })
    suite.answer = (request) => ({ ...say(`echo ${request.body.messages.at(-1).content}`), headersDelayMs: 40 })
    const first = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "parcels" } })
    const conversation_id = first.body.conversation_id as string
    const turns = await Promise.all(
      ["invoices one", "invoices two", "invoices three"].map((message) =>
        server.request("POST", `/apps/${app}/conversation`, { body: { message, conversation_id } })
      )
    )
    expect(turns.map((t) => t.status)).toEqual([200, 200, 200])
    const messages = (await server.request("GET", `/conversations/${conversation_id}/messages`)).body.messages
    expect(messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"])
    for (let i = 0; i < messages.length; i += 2) expect(messages[i + 1].text).toBe(`echo ${messages[i].text}`)
  })

  it("leaves out a pinned member deleted since the App was published", async () => {
    const gone = await createAgent(server, { name: "Invoice helper", description: "Answers questions about invoices." })
    const app = await createApp(server, { agentIds: [gone, shipping] })
    expect((await server.request("DELETE", `/agents/${gone}`)).status).toBe(200)
    const turn = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "When are invoices due?" } })
    expect(turn.status).toBe(200)
    expect((await execution(server, turn.body.executionId)).toolsCalled[0].name).toBe("ask_shipping_desk")
  })

  it("streams start, the member asked, the text and done carrying the greeting", async () => {
    const app = await createApp(server, { greeting: "Hi there.", agentIds: [shipping, billing] })
    const streamed = await openStream(server, `/apps/${app}/conversation`, { message: "Invoices due when?", stream: true })
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    const kinds = events.map((e) => e.event)
    expect(kinds.slice(0, 3)).toEqual(["start", "tool", "tool"])
    expect(kinds.slice(3, -1).every((kind) => kind === "delta")).toBe(true)
    expect(kinds.at(-1)).toBe("done")
    expect(events[1]!.data).toEqual({ name: "ask_billing_desk" })
    expect(events[2]!.data).toEqual({ name: "search_knowledgebases" })
    const text = events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")
    expect(text).toContain("30 days")
    expect(events.at(-1)!.data).toEqual({ reply: text, conversation_id: events[0]!.data.conversation_id, greeting: "Hi there.", executionId: events[0]!.data.executionId })
  })
})

describe("routing by description (builtin)", () => {
  it("sends each message to the member whose description matches, which answers from its own Knowledgebase", async () => {
    const app = await createApp(server, { agentIds: [shipping, billing] })
    const invoices = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "When are my invoices due?" } })
    expect(invoices.body.reply).toContain("30 days")
    expect(invoices.body.reply).not.toContain("Tuesday")
    const invoiceRun = await execution(server, invoices.body.executionId)
    expect(invoiceRun.toolsCalled[0]).toEqual({
      name: "ask_billing_desk",
      arguments: { message: "When are my invoices due?", member: billing, version: 1, matched: ["invoices"] }
    })
    const parcels = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "Where do parcels ship from?" } })
    expect(parcels.body.reply).toContain("Leeds")
    expect((await execution(server, parcels.body.executionId)).toolsCalled[0].name).toBe("ask_shipping_desk")
  })

  it("a message matching no member goes to the first member", async () => {
    const app = await createApp(server, { agentIds: [billing, shipping] })
    const turn = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "Zzyzx?" } })
    expect(turn.status).toBe(200)
    expect((await execution(server, turn.body.executionId)).toolsCalled[0]).toMatchObject({ name: "ask_billing_desk", arguments: { matched: [] } })
  })

  it("an App without a published member Agent is run_failed before anything runs or is charged", async () => {
    const app = await createApp(server, {})
    const before = [await credits(), await executions()]
    expectError(await server.request("POST", `/apps/${app}/conversation`, { body: { message: "hi" } }), 502, "run_failed")
    expect([await credits(), await executions()]).toEqual(before)
  })
})

describe("pinned versions", () => {
  it("runs a member at the version the App pinned until the App is republished; the draft run uses the current published version", async () => {
    const member = await createAgent(server, { name: "Pinned", model: "fake-model", instructions: "Version one instructions." })
    const app = await createApp(server, { agentIds: [member] })
    expect((await server.request("PATCH", `/agents/${member}/draft`, { body: { instructions: "Version two instructions." } })).status).toBe(200)
    expect((await server.request("POST", `/agents/${member}/publish`)).status).toBe(200)
    const ask = async (path: string) => {
      const seen = fake.requests.length
      const response = await server.request("POST", `/apps/${app}/${path}`, { body: { message: "hello" } })
      expect(response.status).toBe(200)
      return { prompt: systemPrompt(fake.requests[seen]!), body: response.body }
    }
    expect((await ask("conversation")).prompt).toBe("Version one instructions.")
    const draft = await ask("draft/run")
    expect(draft.prompt).toBe("Version two instructions.")
    expect(await execution(server, draft.body.executionId)).toMatchObject({ kind: "app", version: null, draft: true, creditsCharged: 1 })
    expect((await server.request("POST", `/apps/${app}/publish`)).status).toBe(200)
    const republished = await ask("conversation")
    expect(republished.prompt).toBe("Version two instructions.")
    expect((await execution(server, republished.body.executionId)).version).toBe(2)
  })
})

describe("Flow members", () => {
  const quoteSteps = (label: string) => [{ type: "template", name: "quote", template: `${label}: a quote for {{message}}` }]
  const leadQuestions = [
    { label: "Company name", type: "text", required: true },
    { label: "Budget", type: "select", options: ["small", "large"], required: true }
  ]

  it("routes a message by description to a Flow without questions, whose output is the reply, streamed, one execution and credit", async () => {
    const quotes = await createFlow(server, { name: "Quote maker", description: "Prepares price quotes for customers.", steps: quoteSteps("v1") })
    const app = await createApp(server, { agentIds: [billing], flowIds: [quotes] })
    const before = await credits()
    const turn = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "I need a price quote for ten chairs" } })
    expect(turn.status).toBe(200)
    expect(turn.body.reply).toBe("v1: a quote for I need a price quote for ten chairs")
    expect(await credits()).toBe(before - 1)
    const run = await execution(server, turn.body.executionId)
    expect(run.toolsCalled[0]).toEqual({
      name: "flow_quote_maker",
      arguments: { message: "I need a price quote for ten chairs", member: quotes, version: 1, matched: ["price", "quote"] }
    })
    expect(run.steps.map((step: any) => [step.type, step.name])).toEqual([["template", "quote"], ["tool", "flow_quote_maker"]])
    const invoices = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "When are my invoices due?" } })
    expect(invoices.body.reply).toContain("30 days")
    const streamed = await openStream(server, `/apps/${app}/conversation`, { message: "another quote please", stream: true })
    const events = (await streamed.all()).filter((event) => event.event !== "comment")
    expect(events.map((event) => event.event)).toEqual(["start", "tool", "delta", "done"])
    expect(events[2]!.data).toEqual({ text: "v1: a quote for another quote please" })
  })

  it("runs a Flow member at the version the App pinned until the App is republished; the draft run uses the Flow's current version", async () => {
    const quotes = await createFlow(server, { name: "Pinned quotes", description: "Quotes.", steps: quoteSteps("v1") })
    const app = await createApp(server, { flowIds: [quotes] })
    expect((await server.request("PATCH", `/flows/${quotes}/draft`, { body: { steps: quoteSteps("v2") } })).status).toBe(200)
    expect((await server.request("POST", `/flows/${quotes}/publish`)).status).toBe(200)
    const ask = async (path: string) => (await server.request("POST", `/apps/${app}/${path}`, { body: { message: "desks" } })).body.reply
    expect(await ask("conversation")).toBe("v1: a quote for desks")
    expect(await ask("draft/run")).toBe("v2: a quote for desks")
    expect((await server.request("POST", `/apps/${app}/publish`)).status).toBe(200)
    expect(await ask("conversation")).toBe("v2: a quote for desks")
  })

  it("a Flow with questions takes a transaction's JSON input as its inputs; free text cannot fill them on builtin (run_failed, nothing charged)", async () => {
    const leads = await createFlow(server, {
      name: "Lead check",
      description: "Qualifies leads.",
      questions: leadQuestions,
      steps: [{ type: "template", name: "verdict", template: "{{company_name}} has a {{budget}} budget" }]
    })
    const inputSchema = { type: "object", properties: { company_name: { type: "string" }, budget: { type: "string" } }, required: ["company_name", "budget"] }
    const outputSchema = { type: "object", properties: { verdict: { type: "string" } }, required: ["verdict"] }
    const app = await createApp(server, { flowIds: [leads] }, { api: { transactionEnabled: true, inputSchema, outputSchema } })
    const done = await server.request("POST", `/apps/${app}/transaction`, { body: { input: { company_name: "Acme", budget: "large" } } })
    expect(done.status).toBe(200)
    expect(done.body.output).toEqual({ verdict: "Acme has a large budget" })
    expect((await execution(server, done.body.executionId)).toolsCalled[0].name).toBe("flow_lead_check")
    const before = await credits()
    const refused = await server.request("POST", `/apps/${app}/conversation`, { body: { message: "Acme has a big budget" } })
    expect(expectError(refused, 502, "run_failed")).toContain("No member of this App can take this message")
    expect(await credits()).toBe(before)
  })
})

describe("transactions", () => {
  const inputSchema = {
    type: "object",
    properties: { question: { type: "string" }, quantity: { type: "integer", minimum: 1 }, email: { type: "string", format: "email" } },
    required: ["question", "quantity"],
    additionalProperties: false
  }
  const answerSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }

  it("refuses input against the input schema naming every problem, before anything runs or is charged", async () => {
    const app = await createApp(server, { agentIds: [billing] }, { api: { transactionEnabled: true, inputSchema, outputSchema: answerSchema } })
    const before = [await credits(), await executions()]
    const refused = await server.request("POST", `/apps/${app}/transaction`, { body: { input: { quantity: 0, email: "nope", colour: "red" } } })
    const message = expectError(refused, 400, "invalid_request")
    for (const problem of ["input.question: is required", "input.quantity: must be >= 1", 'input.email: must match format "email"', "input.colour: is not allowed"]) {
      expect(message).toContain(problem)
    }
    expect([await credits(), await executions()]).toEqual(before)
  })

  it("answers {executionId, output} from the routed member, the output valid under the output schema, one credit", async () => {
    const app = await createApp(server, { agentIds: [shipping, billing] }, { api: { transactionEnabled: true, inputSchema, outputSchema: answerSchema } })
    const before = await credits()
    const done = await server.request("POST", `/apps/${app}/transaction`, { body: { input: { question: "When are invoices due?", quantity: 2 } } })
    expect(done.status).toBe(200)
    expect(done.body).toEqual({ executionId: expect.any(String), output: { answer: expect.stringContaining("30 days") } })
    expect(await credits()).toBe(before - 1)
    expect(await execution(server, done.body.executionId)).toMatchObject({
      kind: "transaction",
      targetId: app,
      version: 1,
      conversationId: null,
      status: "succeeded",
      creditsCharged: 1
    })
  })

  it("a reply that does not match the output schema is 502 run_failed, the execution failed and nothing charged", async () => {
    const tight = { type: "object", properties: { answer: { type: "string", maxLength: 5 } }, required: ["answer"] }
    const app = await createApp(server, { agentIds: [billing] }, { api: { transactionEnabled: true, inputSchema, outputSchema: tight } })
    const before = [await credits(), await executions()]
    const failedBefore = await count(server, "SELECT count(*) AS n FROM executions WHERE kind = 'transaction' AND status = 'failed' AND credits_charged = 0")
    const failed = await server.request("POST", `/apps/${app}/transaction`, { body: { input: { question: "When are invoices due?", quantity: 1 } } })
    expect(expectError(failed, 502, "run_failed")).toContain("output.answer: must NOT have more than 5 characters")
    expect(await credits()).toBe(before[0])
    expect(await executions()).toBe(before[1]! + 1)
    const failedRun = await count(server, "SELECT count(*) AS n FROM executions WHERE kind = 'transaction' AND status = 'failed' AND credits_charged = 0")
    expect(failedRun).toBe(failedBefore + 1)
  })

  it("builtin cannot fill an output schema other than one required string: 502, nothing charged", async () => {
    const priced = { type: "object", properties: { price: { type: "number" } }, required: ["price"] }
    const app = await createApp(server, { agentIds: [billing] }, { api: { transactionEnabled: true, inputSchema, outputSchema: priced } })
    const before = await credits()
    const failed = await server.request("POST", `/apps/${app}/transaction`, { body: { input: { question: "Price?", quantity: 1 } } })
    expect(expectError(failed, 502, "run_failed")).toContain("builtin model cannot fill this output schema")
    expect(await credits()).toBe(before)
  })

  it("is 400 when the published version has no Transaction Service", async () => {
    const app = await createApp(server, { agentIds: [billing] })
    expectError(await server.request("POST", `/apps/${app}/transaction`, { body: { input: {} } }), 400, "invalid_request")
  })
})

describe("refusals", () => {
  it("402 with no credits left: nothing runs, nothing is written", async () => {
    const app = await createApp(server, { agentIds: [billing] }, {
      api: { transactionEnabled: true, inputSchema: { type: "object" }, outputSchema: { type: "object", properties: { a: { type: "string" } }, required: ["a"] } }
    })
    await setCredits(server, 0)
    const before = [await executions(), await count(server, "SELECT count(*) AS n FROM conversations")]
    expectError(await server.request("POST", `/apps/${app}/conversation`, { body: { message: "invoices" } }), 402, "insufficient_credits")
    expectError(await server.request("POST", `/apps/${app}/draft/run`, { body: { message: "invoices" } }), 402, "insufficient_credits")
    expectError(await server.request("POST", `/apps/${app}/transaction`, { body: { input: {} } }), 402, "insufficient_credits")
    expect([await executions(), await count(server, "SELECT count(*) AS n FROM conversations")]).toEqual(before)
    expect(await credits()).toBe(0)
  })

  it("403 api_disabled while the organization's apps gate is off", async () => {
    const app = await createApp(server, { agentIds: [billing] })
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["apps"] })))
    try {
      expectError(await server.request("POST", `/apps/${app}/conversation`, { body: { message: "hi" } }), 403, "api_disabled")
      expectError(await server.request("POST", `/apps/${app}/draft/run`, { body: { message: "hi" } }), 403, "api_disabled")
      expectError(await server.request("POST", `/apps/${app}/transaction`, { body: { input: {} } }), 403, "api_disabled")
    } finally {
      await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["apps"] })))
    }
  })

  it("another organization's App is 404 not_found on every run endpoint", async () => {
    const app = await createApp(server, { agentIds: [billing] })
    expectError(await server.request("POST", `/apps/${app}/conversation`, { body: { message: "hi" }, key: otherKey }), 404, "not_found")
    expectError(await server.request("POST", `/apps/${app}/draft/run`, { body: { message: "hi" }, key: otherKey }), 404, "not_found")
    expectError(await server.request("POST", `/apps/${app}/transaction`, { body: { input: {} }, key: otherKey }), 404, "not_found")
    expectError(await server.request("POST", `/apps/${unknownId()}/conversation`, { body: { message: "hi" } }), 404, "not_found")
  })

  it("a never-published App is not_found to the conversation but runs as a draft", async () => {
    const app = await createApp(server, { agentIds: [billing] }, { publish: false })
    expectError(await server.request("POST", `/apps/${app}/conversation`, { body: { message: "invoices" } }), 404, "not_found")
    expect((await server.request("POST", `/apps/${app}/draft/run`, { body: { message: "invoices" } })).status).toBe(200)
  })
})

describe("the Supervisor on a language model", () => {
  let modelServer: TestServer
  let modelFake: FakeOpenAi
  let script: (request: SeenRequest) => FakeResponse = () => say("ok")
  let billingDesk: string
  let shippingDesk: string
  beforeAll(async () => {
    modelFake = await startFakeOpenAi((request) => script(request))
    modelServer = await startTestServer({ server: { model: { baseUrl: modelFake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 } } })
    billingDesk = await createAgent(modelServer, { name: "Billing desk", description: "Invoices.", instructions: "You are billing.", model: "fake-model" })
    shippingDesk = await createAgent(modelServer, { name: "Shipping desk", description: "Parcels.", instructions: "You are shipping.", model: "fake-model" })
  })
  afterAll(async () => {
    await modelServer.stop()
    await modelFake.close()
  })
  /** The Supervisor asks the billing desk, which says `memberSays`; then answers `finalAnswer`. */
  const route = (memberSays: string, finalAnswer: string) => (request: SeenRequest) => {
    if (systemPrompt(request) === "You are billing.") return say(memberSays)
    if (request.body.messages.some((m: any) => m.role === "tool")) return say(finalAnswer)
    return callTool("ask_billing_desk", { message: "invoice due?" })
  }

  it("offers the members as ask_<name> tools and answers from the member the model chose", async () => {
    const app = await createApp(modelServer, { agentIds: [shippingDesk, billingDesk] })
    script = route("Due in 30 days.", "Your invoice is due in 30 days.")
    const seen = modelFake.requests.length
    const turn = await modelServer.request("POST", `/apps/${app}/conversation`, { body: { message: "When is my invoice due?" } })
    expect(turn.status).toBe(200)
    expect(turn.body.reply).toBe("Your invoice is due in 30 days.")
    const supervisor = modelFake.requests[seen]!
    expect(supervisor.body.tools.map((t: any) => t.function.name)).toEqual(["ask_shipping_desk", "ask_billing_desk"])
    expect(systemPrompt(supervisor)).toContain('Supervisor of the App "Desk"')
    const member = modelFake.requests[seen + 1]!
    expect(member.body.messages.at(-1)).toMatchObject({ role: "user", content: "invoice due?" })
    const run = await execution(modelServer, turn.body.executionId)
    expect(run.toolsCalled.map((t: any) => t.name)).toEqual(["ask_billing_desk"])
  })

  it("offers a Flow member as a flow_<name> tool typed by its questions; the model's arguments run it at the pinned version", async () => {
    const created = await modelServer.request("POST", "/flows", {
      body: {
        name: "Lead check",
        description: "Qualifies a lead.",
        questions: [
          { label: "Company name", type: "text", required: true },
          { label: "Budget", type: "select", options: ["small", "large"], required: true }
        ],
        steps: [{ type: "template", name: "verdict", template: "{{company_name}}: {{budget}}" }]
      }
    })
    const leads = created.body.flow.id as string
    expect((await modelServer.request("POST", `/flows/${leads}/publish`)).status).toBe(200)
    const app = await createApp(modelServer, { agentIds: [billingDesk], flowIds: [leads] })
    script = (request) =>
      request.body.messages.some((m: any) => m.role === "tool")
        ? say(`Checked: ${request.body.messages.find((m: any) => m.role === "tool").content}`)
        : callTool("flow_lead_check", { company_name: "Acme", budget: "large" })
    const seen = modelFake.requests.length
    const turn = await modelServer.request("POST", `/apps/${app}/conversation`, { body: { message: "Qualify Acme, big budget" } })
    expect(turn.status).toBe(200)
    expect(turn.body.reply).toBe("Checked: Acme: large")
    const offered = modelFake.requests[seen]!.body.tools.find((t: any) => t.function.name === "flow_lead_check")
    expect(offered.function.parameters).toMatchObject({
      type: "object",
      properties: { company_name: { type: "string" }, budget: { enum: ["small", "large"] } },
      required: ["company_name", "budget"]
    })
    const run = await execution(modelServer, turn.body.executionId)
    expect(run.toolsCalled.map((t: any) => t.name)).toEqual(["flow_lead_check"])
    expect(run.steps.map((step: any) => step.name)).toContain("verdict")
  })

  it("a transaction's JSON reply is validated against the output schema: valid is answered, invalid is 502 and charges nothing", async () => {
    const outputSchema = { type: "object", properties: { days: { type: "integer" } }, required: ["days"], additionalProperties: false }
    const app = await createApp(modelServer, { agentIds: [billingDesk] }, { api: { transactionEnabled: true, inputSchema: { type: "object" }, outputSchema } })
    script = route("30 days.", '```json\n{"days": 30}\n```')
    const seen = modelFake.requests.length
    const done = await modelServer.request("POST", `/apps/${app}/transaction`, { body: { input: { invoice: "A-1" } } })
    expect(done.status).toBe(200)
    expect(done.body.output).toEqual({ days: 30 })
    expect(modelFake.requests[seen]!.body.messages.at(-1)).toMatchObject({ role: "user", content: '{"invoice":"A-1"}' })
    expect(systemPrompt(modelFake.requests[seen]!)).toContain(JSON.stringify(outputSchema))
    const before = await credits(modelServer)
    script = route("30 days.", '{"days": "thirty"}')
    const failed = await modelServer.request("POST", `/apps/${app}/transaction`, { body: { input: { invoice: "A-1" } } })
    expect(expectError(failed, 502, "run_failed")).toContain("output.days: must be integer")
    expect(await credits(modelServer)).toBe(before)
  })
})
