/**
 * The contract is the runtime truth: real responses of a real server, for every operation of
 * `GET /openapi.json` (happy paths and typical errors), are checked against that document. Each
 * answer's status must be declared for its operation, and its JSON body must validate (Ajv, JSON
 * Schema 2020-12, `#/components/schemas/...` resolved) against the declared response schema.
 * The last test fails if an operation of the document was never exercised.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { insertAgents, insertKnowledgebases, organizationId, personalKey, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestResponse, type TestServer } from "../support/server.js"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fake-openai.js"
import { setCredits } from "../support/knowledge.js"
import { uploadFile, waitForSource } from "../support/sources.js"
import { createPlan, createSuite, insertEndUser, insertPortal } from "../provisioning/support.js"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const docId = "svc-openapi.json"
const methods = ["get", "post", "put", "patch", "delete"] as const

let server: TestServer
/** A provider that always fails, for the runs' 502. */
let failingModel: FakeOpenAi
let doc: any
let ajv: Ajv2020
/** Operations seen, by operation id. */
const exercised = new Set<string>()

beforeAll(async () => {
  failingModel = await startFakeOpenAi(() => ({ status: 500, error: "provider down" }))
  server = await startTestServer({ server: { model: { baseUrl: failingModel.baseUrl, maxAttempts: 1 } } })
  const response = await server.request("GET", "/openapi.json", { key: null })
  expect(response.status).toBe(200)
  doc = response.body
  ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema({ ...doc, $id: docId })
})
afterAll(async () => {
  await server.stop()
  await failingModel.close()
})
// Each test starts with a fresh rate-limit window (120 requests per minute per key).
beforeEach(() => server.clock.advance(60_000))

/** `/a/b~c` as one JSON pointer segment. */
const pointerSegment = (text: string) => text.replace(/~/g, "~0").replace(/\//g, "~1")

/** The document's path template (`/api/v1/knowledgebases/{id}`) that a concrete path matches. */
const templateOf = (method: string, path: string): string | undefined => {
  const concrete = `/api/v1${path.split("?")[0]}`
  return Object.keys(doc.paths).find((template) => {
    if (doc.paths[template][method] === undefined) return false
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`)
    return pattern.test(concrete)
  })
}

/** Headers the document describes on some responses: present on an answer, they must be declared for it. */
const documentedHeaders = ["x-request-id", "retry-after", "idempotent-replayed", "deprecation"]

const validators = new Map<string, ValidateFunction>()
const validatorAt = (pointer: string): ValidateFunction => {
  let validate = validators.get(pointer)
  if (!validate) {
    const found = ajv.getSchema(`${docId}#${pointer}`)
    if (!found) throw new Error(`no schema at ${pointer}`)
    validators.set(pointer, (validate = found))
  }
  return validate
}

/**
 * Checks one real response against the document: the status is declared for the operation, so are
 * the documented headers it carries, the content type is a declared one, a JSON body validates
 * against the declared schema, and the status is the one the test expected. Answers the problems found (empty when it conforms).
 */
const conformance = (method: string, path: string, response: TestResponse, expected: number): Array<string> => {
  const template = templateOf(method, path)
  if (template === undefined) return [`${method.toUpperCase()} ${path}: no operation of the document matches`]
  const operation = doc.paths[template][method]
  exercised.add(operation.operationId)
  const where = `${operation.operationId} (${method.toUpperCase()} ${path}) answered ${response.status}`
  const problems: Array<string> = []
  if (response.status !== expected) problems.push(`${where}: expected ${expected}; body ${response.text.slice(0, 300)}`)
  const declared = operation.responses[String(response.status)]
  if (declared === undefined) {
    return [...problems, `${where}: status not declared (declared: ${Object.keys(operation.responses).join(", ")})`]
  }
  const declaredHeaders = Object.keys(declared.headers ?? {}).map((name) => name.toLowerCase())
  for (const header of documentedHeaders) {
    if (response.headers.has(header) && !declaredHeaders.includes(header)) problems.push(`${where}: header ${header} not declared`)
  }
  if (declaredHeaders.includes("x-request-id") && !response.headers.has("x-request-id")) problems.push(`${where}: no X-Request-Id`)
  const contentType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim()
  const media = Object.keys(declared.content ?? {})
  if (media.length === 0) return response.text === "" ? problems : [...problems, `${where}: a body where none is declared`]
  if (!media.includes(contentType)) return [...problems, `${where}: content type '${contentType}' not declared (${media.join(", ")})`]
  if (contentType !== "application/json") return problems
  const pointer = ["", "paths", template, method, "responses", String(response.status), "content", "application/json", "schema"]
    .map(pointerSegment)
    .join("/")
  const validate = validatorAt(pointer)
  if (!validate(response.body)) {
    problems.push(`${where}: body does not match the declared schema: ${ajv.errorsText(validate.errors, { separator: "; " })}`)
  }
  return problems
}

type Options = { key?: string | null; body?: unknown; headers?: Record<string, string> }

/** Problems of the current test, reported together at its end. */
let problems: Array<string> = []
beforeEach(() => {
  problems = []
})
const expectConformance = () => expect(problems).toEqual([])

/** Sends a request, checks the answer against the document, and returns it. */
const call = async (method: (typeof methods)[number], path: string, expected: number, options: Options = {}) => {
  const response = await server.request(method.toUpperCase(), path, options)
  problems.push(...conformance(method, path, response, expected))
  return response
}

const enableReview = (on: boolean) =>
  server.admin(
    Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", on ? { enable: ["review"] } : { disable: ["review"] }))
  )

describe("errors every operation can answer", () => {
  it("401, 403 and 429 carry declared envelopes", async () => {
    await call("get", "/knowledgebases", 401, { key: null })
    await call("get", "/knowledgebases", 401, { key: "svco_notakeyatall" })
    const reader = await server.createKey({ name: "reader", scopes: ["knowledge:read"] })
    await call("post", "/knowledgebases", 403, { key: reader, body: { name: "Refused" } })
    const busy = await server.createKey({ name: "busy", scopes: ["knowledge:read"] })
    for (let i = 0; i < 120; i++) expect((await server.request("GET", "/knowledgebases?limit=1", { key: busy })).status).toBe(200)
    await call("get", "/knowledgebases", 429, { key: busy })
    expectConformance()
  })

  it("413 for a body over 4.5 MB", async () => {
    await call("post", "/knowledgebases", 413, { body: { name: "x".repeat(4_600_000) } })
    expectConformance()
  })
})

describe("agents and apps", () => {
  it("lists Agents, narrowed by fields, and refuses a bad limit", async () => {
    await insertAgents(server, { count: 3 })
    await call("get", "/agents", 200)
    await call("get", "/agents?limit=2", 200)
    await call("get", "/agents?fields=id,name", 200)
    await call("get", "/agents?limit=0", 400)
    expectConformance()
  })

  it("lists Apps, published and with drafts, and answers 403 while the gate is off", async () => {
    const org = await organizationId(server)
    const at = "2026-11-01T00:00:00.000Z"
    const draft = unknownId()
    const published = unknownId()
    await sql(
      server,
      (db) => db`INSERT INTO apps (id, organization_id, name, description, published_version, created_at, updated_at)
        VALUES (${draft}, ${org}, 'Draft', 'draft', NULL, ${at}, ${at}), (${published}, ${org}, 'Desk', 'draft', 1, ${at}, ${at})`
    )
    await sql(
      server,
      (db) => db`INSERT INTO app_versions (app_id, version, name, description, conversation_enabled, transaction_enabled,
          input_schema, output_schema, published_at)
        VALUES (${published}, 1, 'Desk', 'published', 1, 1, ${JSON.stringify({ type: "object" })}, ${JSON.stringify({ type: "object" })}, ${at})`
    )
    await call("get", "/apps", 200)
    await call("get", "/apps?include=drafts", 200)
    await call("get", "/apps?fields=id,name", 200)
    await call("get", "/apps?include=drafts&fields=id,published", 200)
    await call("get", "/apps?fields=nope", 400)
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["apps"] })))
    await call("get", "/apps", 403)
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["apps"] })))
    expectConformance()
  })
})

describe("authoring agents and apps", () => {
  it("creates, edits, publishes, reads, lists and deletes Agents, and refuses what it must", async () => {
    const kb = (await server.request("POST", "/knowledgebases", { body: { name: "Agent knowledge" } })).body.knowledgebase.id as string
    const created = await call("post", "/agents", 201, { body: { name: "Contract agent", knowledgebaseIds: [kb] } })
    const id = created.body.agent.id as string
    await call("post", "/agents", 201, { body: { name: "Keyed agent" }, headers: { "idempotency-key": "contract-agent" } })
    await call("post", "/agents", 201, { body: { name: "Keyed agent" }, headers: { "idempotency-key": "contract-agent" } })
    await call("post", "/agents", 409, { body: { name: "Other agent" }, headers: { "idempotency-key": "contract-agent" } })
    await call("post", "/agents", 400, { body: { name: "Refs", flowIds: [unknownId()] } })
    await call("get", `/agents/${id}`, 404)
    await call("get", `/agents/${id}/draft`, 200)
    await call("get", `/agents/${unknownId()}/draft`, 404)
    await call("patch", `/agents/${id}/draft`, 200, { body: { instructions: "Be brief.", greeting: null } })
    await call("patch", `/agents/${id}/draft`, 400, { body: {} })
    await call("patch", `/agents/${unknownId()}/draft`, 404, { body: { name: "x" } })
    await call("post", `/agents/${id}/publish`, 200)
    await call("post", `/agents/${unknownId()}/publish`, 404)
    await call("get", `/agents/${id}`, 200)
    await call("get", "/agents?include=drafts&fields=id,published&updatedSince=2026-01-01T00:00:00Z", 200)
    const member = await personalKey(server, { email: "member@contract.test", role: "member" })
    await call("delete", `/agents/${id}`, 403, { key: member })
    await call("delete", `/agents/${id}`, 200)
    await call("delete", `/agents/${id}`, 404)
    expectConformance()
  })

  it("creates, edits, publishes, reads and deletes Apps, and refuses what it must", async () => {
    const agent = (await server.request("POST", "/agents", { body: { name: "App member" } })).body.agent.id as string
    const created = await call("post", "/apps", 201, { body: { name: "Contract app", greeting: "Hi", agentIds: [agent] } })
    const id = created.body.app.id as string
    await call("post", "/apps", 201, { body: { name: "Keyed app" }, headers: { "idempotency-key": "contract-app" } })
    await call("post", "/apps", 201, { body: { name: "Keyed app" }, headers: { "idempotency-key": "contract-app" } })
    await call("post", "/apps", 409, { body: { name: "Other app" }, headers: { "idempotency-key": "contract-app" } })
    await call("post", "/apps", 400, { body: { name: "Refs", agentIds: [unknownId()] } })
    await call("get", `/apps/${id}/draft`, 200)
    await call("get", `/apps/${unknownId()}/draft`, 404)
    const schema = { type: "object", properties: { sku: { type: "string" } } }
    await call("patch", `/apps/${id}/draft`, 200, { body: { api: { transactionEnabled: true, inputSchema: schema, outputSchema: schema } } })
    await call("patch", `/apps/${id}/draft`, 400, { body: { api: { inputSchema: { type: 12 } } } })
    await call("patch", `/apps/${unknownId()}/draft`, 404, { body: { name: "x" } })
    await call("post", `/apps/${id}/publish`, 400)
    await call("get", `/apps/${id}`, 404)
    await server.request("POST", `/agents/${agent}/publish`)
    await call("post", `/apps/${id}/publish`, 200)
    await call("post", `/apps/${unknownId()}/publish`, 404)
    await call("get", `/apps/${id}`, 200)
    await call("get", "/apps", 200)
    const member = await personalKey(server, { email: "member@contract-apps.test", role: "member" })
    await call("delete", `/apps/${id}`, 403, { key: member })
    await call("delete", `/apps/${id}`, 200)
    await call("delete", `/apps/${id}`, 404)
    expectConformance()
  })
})

describe("authoring flows", () => {
  it("creates, edits, publishes, reads, lists and deletes Flows, and refuses what it must", async () => {
    const body = {
      name: "Contract flow",
      questions: [
        { label: "Company name", type: "text", required: true },
        { label: "Budget", type: "select", options: ["small", "large"] }
      ],
      steps: [{ type: "template", name: "summary", template: "{{company_name}} {{budget}}" }],
      output: "{{summary}}"
    }
    const created = await call("post", "/flows", 201, { body })
    const id = created.body.flow.id as string
    await call("post", "/flows", 201, { body: { ...body, name: "Keyed flow" }, headers: { "idempotency-key": "contract-flow" } })
    await call("post", "/flows", 201, { body: { ...body, name: "Keyed flow" }, headers: { "idempotency-key": "contract-flow" } })
    await call("post", "/flows", 409, { body: { ...body, name: "Other flow" }, headers: { "idempotency-key": "contract-flow" } })
    await call("post", "/flows", 400, { body: { ...body, questions: [{ label: "Company name", type: "text" }, { label: "company name", type: "text" }] } })
    await call("post", "/flows", 400, { body: { ...body, steps: [{ type: "agent", name: "asked", agentId: unknownId(), message: "{{company_name}}" }] } })
    await call("get", `/flows/${id}`, 404)
    await call("get", `/flows/${id}/draft`, 200)
    await call("get", `/flows/${unknownId()}/draft`, 404)
    await call("patch", `/flows/${id}/draft`, 200, { body: { description: "Qualifies leads.", output: null } })
    await call("patch", `/flows/${id}/draft`, 400, { body: {} })
    await call("patch", `/flows/${id}/draft`, 400, { body: { steps: [{ type: "template", name: "summary", template: "{{nope}}" }] } })
    await call("patch", `/flows/${unknownId()}/draft`, 404, { body: { name: "x" } })
    await call("post", `/flows/${id}/publish`, 200)
    await call("post", `/flows/${unknownId()}/publish`, 404)
    await call("get", `/flows/${id}`, 200)
    await call("get", "/flows", 200)
    await call("get", "/flows?fields=id,inputs,inputsSchema&limit=1", 200)
    await call("get", "/flows?include=drafts&fields=id,published&updatedSince=2026-01-01T00:00:00Z", 200)
    await call("get", "/flows?fields=published", 400)
    const member = await personalKey(server, { email: "member@contract-flows.test", role: "member" })
    await call("delete", `/flows/${id}`, 403, { key: member })
    await call("delete", `/flows/${id}`, 200)
    await call("delete", `/flows/${id}`, 404)
    expectConformance()
  })

  it("refuses publishing a draft whose Agent was deleted since", async () => {
    const agent = (await server.request("POST", "/agents", { body: { name: "Flow step agent" } })).body.agent.id as string
    const body = {
      name: "Asks an agent",
      questions: [],
      steps: [{ type: "agent", name: "asked", agentId: agent, message: "{{message}}" }]
    }
    const id = (await call("post", "/flows", 201, { body })).body.flow.id as string
    await server.request("DELETE", `/agents/${agent}`)
    await call("post", `/flows/${id}/publish`, 400)
    expectConformance()
  })
})

describe("runs", () => {
  it("talks to Agents (published and draft), reads executions and conversations, and refuses what it must", async () => {
    const agent = (await server.request("POST", "/agents", { body: { name: "Contract runner" } })).body.agent.id as string
    await call("post", `/agents/${agent}/conversation`, 404, { body: { message: "hi" } })
    await call("post", `/agents/${agent}/draft/run`, 200, { body: { message: "hi" } })
    await call("post", `/agents/${unknownId()}/draft/run`, 404, { body: { message: "hi" } })
    await call("post", `/agents/${agent}/draft/run`, 400, { body: { message: "" } })
    await server.request("POST", `/agents/${agent}/publish`)
    const turn = await call("post", `/agents/${agent}/conversation`, 200, { body: { message: "hi" } })
    await call("post", `/agents/${agent}/conversation`, 200, { body: { message: "again", conversation_id: turn.body.conversation_id } })
    await call("post", `/agents/${agent}/conversation`, 404, { body: { message: "hi", conversation_id: unknownId() } })
    await call("post", `/agents/${agent}/conversation`, 400, { body: { message: "hi", model: "x" } })
    await call("get", `/executions/${turn.body.executionId}`, 200)
    await call("get", `/executions/${turn.body.executionId}?view=summary`, 200)
    await call("get", `/executions/${unknownId()}`, 404)
    await call("post", `/executions/${turn.body.executionId}/cancel`, 200)
    await call("post", `/executions/${unknownId()}/cancel`, 404)
    const detached = await call("post", `/agents/${agent}/conversation`, 202, { body: { message: "later", detach: true } })
    await call("post", `/agents/${agent}/conversation`, 400, { body: { message: "both", detach: true, stream: true } })
    await call("get", `/executions/${detached.body.executionId}/events`, 200)
    await call("get", `/executions/${detached.body.executionId}/events`, 400, { headers: { "last-event-id": "x" } })
    await call("get", `/executions/${turn.body.executionId}/events`, 404)
    await call("get", `/conversations/${turn.body.conversation_id}`, 200)
    await call("get", `/conversations/${unknownId()}`, 404)
    await call("get", `/conversations/${turn.body.conversation_id}/messages?limit=1`, 200)
    await call("get", `/conversations/${turn.body.conversation_id}/messages?cursor=bogus`, 400)
    await call("get", `/conversations/${unknownId()}/messages`, 404)
    const flowsOnly = await server.createKey({ name: "flows executor", scopes: ["flows:execute"] })
    await call("get", `/conversations/${turn.body.conversation_id}`, 403, { key: flowsOnly })
    await call("get", `/conversations?targetKind=agent&limit=1`, 200)
    await call("get", `/conversations?limit=0`, 400)
    await call("get", `/conversations?targetKind=agent`, 403, { key: flowsOnly })
    await call("get", `/conversations/${turn.body.conversation_id}/export`, 200)
    await call("get", `/conversations/${unknownId()}/export`, 404)
    await call("get", `/executions?kind=agent&limit=2`, 200)
    await call("get", `/executions?status=bogus`, 400)
    const remote = (await server.request("POST", "/agents", { body: { name: "Remote", model: "remote-model" } })).body.agent.id as string
    await server.request("POST", `/agents/${remote}/publish`)
    await call("post", `/agents/${remote}/conversation`, 502, { body: { message: "hi" } })
    await setCredits(server, 0)
    await call("post", `/agents/${agent}/conversation`, 402, { body: { message: "hi" } })
    await setCredits(server, 1_000)
    expectConformance()
  })
})

describe("app runs", () => {
  it("talks to Apps (published and draft), runs transactions, and refuses what it must", async () => {
    const agent = (await server.request("POST", "/agents", { body: { name: "App member", description: "Answers invoices." } })).body.agent.id as string
    await server.request("POST", `/agents/${agent}/publish`)
    const answerSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
    const app = (await server.request("POST", "/apps", { body: { name: "Contract desk", greeting: "Hello.", agentIds: [agent] } })).body.app.id as string
    await server.request("PATCH", `/apps/${app}/draft`, {
      body: { api: { transactionEnabled: true, inputSchema: { type: "object", required: ["question"] }, outputSchema: answerSchema } }
    })
    await call("post", `/apps/${app}/conversation`, 404, { body: { message: "hi" } })
    await call("post", `/apps/${app}/draft/run`, 200, { body: { message: "invoices" } })
    await call("post", `/apps/${unknownId()}/draft/run`, 404, { body: { message: "hi" } })
    await call("post", `/apps/${app}/draft/run`, 400, { body: { message: "" } })
    await call("post", `/apps/${app}/transaction`, 404, { body: { input: {} } })
    await server.request("POST", `/apps/${app}/publish`)
    const turn = await call("post", `/apps/${app}/conversation`, 200, { body: { message: "invoices" } })
    await call("post", `/apps/${app}/conversation`, 200, { body: { message: "again", conversation_id: turn.body.conversation_id } })
    await call("post", `/apps/${app}/conversation`, 404, { body: { message: "hi", conversation_id: unknownId() } })
    await call("post", `/apps/${app}/transaction`, 200, { body: { input: { question: "invoices" } } })
    await call("post", `/apps/${app}/transaction`, 400, { body: { input: {} } })
    await call("post", `/apps/${app}/transaction`, 400, { body: { input: {}, extra: 1 } })
    const remote = (await server.request("POST", "/agents", { body: { name: "Remote member", model: "remote-model" } })).body.agent.id as string
    await server.request("POST", `/agents/${remote}/publish`)
    const failing = (await server.request("POST", "/apps", { body: { name: "Failing desk", agentIds: [remote] } })).body.app.id as string
    await server.request("POST", `/apps/${failing}/publish`)
    await call("post", `/apps/${failing}/conversation`, 502, { body: { message: "hi" } })
    await setCredits(server, 0)
    await call("post", `/apps/${app}/conversation`, 402, { body: { message: "hi" } })
    await call("post", `/apps/${app}/transaction`, 402, { body: { input: { question: "x" } } })
    await setCredits(server, 1_000)
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["apps"] })))
    await call("post", `/apps/${app}/conversation`, 403, { body: { message: "hi" } })
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["apps"] })))
    expectConformance()
  })
})

describe("flow runs", () => {
  it("runs Flows (published and draft, with inputs and conversational) and refuses what it must", async () => {
    const questions = [{ label: "Company name", type: "text", required: true }]
    const steps = [{ type: "template", name: "greeting", template: "Hello {{company_name}}" }]
    const flow = (await server.request("POST", "/flows", { body: { name: "Contract flow run", questions, steps } })).body.flow.id as string
    await call("post", `/flows/${flow}/run`, 404, { body: { inputs: { company_name: "Acme" } } })
    await call("post", `/flows/${flow}/draft/run`, 200, { body: { inputs: { company_name: "Acme" } } })
    await call("post", `/flows/${unknownId()}/draft/run`, 404, { body: { inputs: {} } })
    await call("post", `/flows/${flow}/draft/run`, 400, { body: { inputs: { company_name: 1 } } })
    await server.request("POST", `/flows/${flow}/publish`)
    await call("post", `/flows/${flow}/run`, 200, { body: { inputs: { company_name: "Acme" } } })
    await call("post", `/flows/${flow}/run`, 400, { body: { inputs: {}, extra: true } })
    const chat = (await server.request("POST", "/flows", { body: { name: "Contract chat flow", questions: [], steps: [{ type: "template", name: "echo", template: "{{message}}" }] } })).body.flow.id as string
    await server.request("POST", `/flows/${chat}/publish`)
    const turn = await call("post", `/flows/${chat}/run`, 200, { body: { message: "hi" } })
    await call("post", `/flows/${chat}/run`, 200, { body: { message: "again", conversation_id: turn.body.conversation_id } })
    await call("post", `/flows/${chat}/run`, 404, { body: { message: "hi", conversation_id: unknownId() } })
    const prompting = (await server.request("POST", "/flows", { body: { name: "Contract prompt flow", questions: [], steps: [{ type: "prompt", name: "written", template: "{{message}}", model: "remote-model" }] } })).body.flow.id as string
    await server.request("POST", `/flows/${prompting}/publish`)
    await call("post", `/flows/${prompting}/run`, 502, { body: { message: "hi" } })
    await setCredits(server, 0)
    await call("post", `/flows/${chat}/run`, 402, { body: { message: "hi" } })
    await setCredits(server, 1_000)
    expectConformance()
  })
})

describe("knowledgebases", () => {
  it("creates (also idempotently), lists, reads, and refuses what it must", async () => {
    const created = await call("post", "/knowledgebases", 201, { body: { name: "Contract", description: "Checked." } })
    const kb = created.body.knowledgebase.id as string
    const headers = { "idempotency-key": "contract-kb-1" }
    await call("post", "/knowledgebases", 201, { body: { name: "Once" }, headers })
    const replay = await call("post", "/knowledgebases", 201, { body: { name: "Once" }, headers })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    await call("post", "/knowledgebases", 409, { body: { name: "Twice" }, headers })
    await call("post", "/knowledgebases", 400, { body: { name: "" } })
    await call("post", "/knowledgebases", 400, { body: "{not json" })
    await call("get", "/knowledgebases", 200)
    await call("get", "/knowledgebases", 200)
    await call("get", "/knowledgebases?fields=id,name", 200)
    await call("get", "/knowledgebases?limit=1", 200)
    await call("get", "/knowledgebases?cursor=forged", 400)
    await call("get", "/knowledgebases?fields=bogus", 400)
    await call("get", `/knowledgebases/${kb}`, 200)
    await call("get", `/knowledgebases/${unknownId()}`, 404)
    expectConformance()
  })

  it("answers 403 plan_limit (also replayed) at the plan's cap", async () => {
    const key = await server.createOrganization("capped")
    await insertKnowledgebases(server, { org: "capped", count: 50 })
    const headers = { "idempotency-key": "contract-capped" }
    await call("post", "/knowledgebases", 403, { key, body: { name: "One too many" }, headers })
    await call("post", "/knowledgebases", 403, { key, body: { name: "One too many" }, headers })
    expectConformance()
  })
})

describe("pages, sources, search, changes and export", () => {
  let kb: string
  let folder: string
  let page: string
  let source: string

  it("creates pages and folders, under review too", async () => {
    kb = (await call("post", "/knowledgebases", 201, { body: { name: "Handbook" } })).body.knowledgebase.id
    folder = (await call("post", `/knowledgebases/${kb}/pages`, 201, { body: { title: "Policies", templateKey: "folder" } })).body.page.id
    const headers = { "idempotency-key": "contract-page-1" }
    const body = { title: "Refunds", bodyMarkdown: "# Refunds\n\nWithin 30 days. See [[Policies]].", parentPageId: folder }
    page = (await call("post", `/knowledgebases/${kb}/pages`, 201, { body, headers })).body.page.id
    await call("post", `/knowledgebases/${kb}/pages`, 201, { body, headers })
    await call("post", `/knowledgebases/${kb}/pages`, 409, { body: { ...body, title: "Other" }, headers })
    await call("post", `/knowledgebases/${kb}/pages`, 400, { body: { title: "" } })
    await call("post", `/knowledgebases/${unknownId()}/pages`, 404, { body: { title: "Nowhere" } })
    await enableReview(true)
    try {
      const pending = await call("post", `/knowledgebases/${kb}/pages`, 202, { body: { title: "Pending" } })
      await call("get", pending.body.reviewPath, 200)
      await call("get", `/knowledgebases/${kb}/reviews/${unknownId()}`, 404)
      const reviewed = { "idempotency-key": "contract-page-review" }
      await call("post", `/knowledgebases/${kb}/pages`, 202, { body: { title: "Pending twice" }, headers: reviewed })
      await call("post", `/knowledgebases/${kb}/pages`, 202, { body: { title: "Pending twice" }, headers: reviewed })
    } finally {
      await enableReview(false)
    }
    expectConformance()
  })

  it("reads, edits, appends to and moves pages; lists pages and revisions", async () => {
    await call("get", `/knowledgebases/${kb}/pages/${page}`, 200)
    await call("get", `/knowledgebases/${kb}/pages/${unknownId()}`, 404)
    await call("patch", `/knowledgebases/${kb}/pages/${page}`, 200, {
      body: { patch: [{ op: "replace", oldString: "30 days", newString: "45 days" }] }
    })
    await call("patch", `/knowledgebases/${kb}/pages/${page}`, 400, {
      body: { patch: [{ op: "replace", oldString: "no such anchor", newString: "x" }] }
    })
    await call("patch", `/knowledgebases/${kb}/pages/${unknownId()}`, 404, { body: { description: "x" } })
    await call("post", `/knowledgebases/${kb}/pages/${page}/append`, 200, { body: { text: "\n\n## Exceptions\n" } })
    await call("post", `/knowledgebases/${kb}/pages/${page}/append`, 400, { body: { text: "" } })
    await call("post", `/knowledgebases/${kb}/pages/${unknownId()}/append`, 404, { body: { text: "x" } })
    await enableReview(true)
    try {
      await call("patch", `/knowledgebases/${kb}/pages/${page}`, 202, { body: { description: "Reviewed edit" } })
      await call("post", `/knowledgebases/${kb}/pages/${page}/append`, 202, { body: { text: "\nReviewed." } })
    } finally {
      await enableReview(false)
    }
    await call("post", `/knowledgebases/${kb}/pages/${page}/move`, 200, { body: { parentPageId: null } })
    await call("post", `/knowledgebases/${kb}/pages/${page}/move`, 200, { body: { parentPageId: folder } })
    await call("post", `/knowledgebases/${kb}/pages/${folder}/move`, 400, { body: { parentPageId: page } })
    await call("post", `/knowledgebases/${kb}/pages/${unknownId()}/move`, 404, { body: { parentPageId: null } })
    await call("get", `/knowledgebases/${kb}/pages`, 200)
    await call("get", `/knowledgebases/${kb}/pages?depth=1&limit=1`, 200)
    await call("get", `/knowledgebases/${kb}/pages?parentPageId=${folder}`, 200)
    await call("get", `/knowledgebases/${kb}/pages?fields=id,title,path`, 200)
    await call("get", `/knowledgebases/${kb}/pages?depth=0`, 400)
    await call("get", `/knowledgebases/${unknownId()}/pages`, 404)
    await call("get", `/knowledgebases/${kb}/pages/${page}/revisions`, 200)
    await call("get", `/knowledgebases/${kb}/pages/${page}/revisions?fields=id,status`, 200)
    await call("get", `/knowledgebases/${kb}/pages/${unknownId()}/revisions`, 404)
    expectConformance()
  })

  it("uploads (JSON and multipart, under review too), lists, reads and files sources", async () => {
    const uploaded = await call("post", `/knowledgebases/${kb}/sources`, 202, {
      body: { name: "Expenses", contentText: "Keep every expense receipt for seven years." }
    })
    source = uploaded.body.source.id
    const headers = { "idempotency-key": "contract-source-1" }
    await call("post", `/knowledgebases/${kb}/sources`, 202, { body: { name: "Travel", contentMarkdown: "# Travel\n\nTrains." }, headers })
    await call("post", `/knowledgebases/${kb}/sources`, 202, { body: { name: "Travel", contentMarkdown: "# Travel\n\nTrains." }, headers })
    await call("post", `/knowledgebases/${kb}/sources`, 400, { body: { name: "Both", contentText: "a", contentMarkdown: "b" } })
    await call("post", `/knowledgebases/${unknownId()}/sources`, 404, { body: { name: "Nowhere", contentText: "x" } })
    const form = await uploadFile(server, kb, { filename: "notes.txt", bytes: "Notes on meals.", contentType: "text/plain" })
    problems.push(...conformance("post", `/knowledgebases/${kb}/sources`, form, 202))
    await enableReview(true)
    try {
      await call("post", `/knowledgebases/${kb}/sources`, 202, { body: { name: "Reviewed", contentText: "Waiting for a person." } })
    } finally {
      await enableReview(false)
    }
    await waitForSource(server, kb, source)
    await call("get", `/knowledgebases/${kb}/sources`, 200)
    await call("get", `/knowledgebases/${kb}/sources?fields=id,status&limit=1`, 200)
    await call("get", `/knowledgebases/${kb}/sources?updatedSince=yesterday`, 400)
    await call("get", `/knowledgebases/${unknownId()}/sources`, 404)
    await call("get", `/knowledgebases/${kb}/sources/${source}`, 200)
    await call("get", `/knowledgebases/${kb}/sources/${unknownId()}`, 404)
    await call("post", `/knowledgebases/${kb}/sources/${source}/move`, 200, { body: { parentPageId: folder } })
    await call("post", `/knowledgebases/${kb}/sources/${source}/move`, 200, { body: { parentPageId: null } })
    await call("post", `/knowledgebases/${kb}/sources/${source}/move`, 400, { body: { parentPageId: "not a uuid" } })
    await call("post", `/knowledgebases/${kb}/sources/${unknownId()}/move`, 404, { body: { parentPageId: null } })
    await call("get", `/knowledgebases/${kb}/pages?parentPageId=${folder}`, 200)
    expectConformance()
  })

  it("searches, follows changes and exports", async () => {
    await call("post", `/knowledgebases/${kb}/search`, 200, { body: { query: "expense receipt" } })
    await call("post", `/knowledgebases/all/search`, 200, { body: { query: "refunds", kinds: ["pages"] } })
    await call("post", `/knowledgebases/${kb}/search`, 400, { body: { query: "" } })
    await call("post", `/knowledgebases/${unknownId()}/search`, 404, { body: { query: "x" } })
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { credits: 0 })))
    await call("post", `/knowledgebases/${kb}/search`, 402, { body: { query: "expense" } })
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { credits: 1_000 })))
    await call("get", `/knowledgebases/${kb}/changes`, 200)
    await call("get", `/knowledgebases/all/changes?limit=2`, 200)
    await call("get", `/knowledgebases/${kb}/changes?since=2026-01-01T00:00:00Z`, 200)
    await call("get", `/knowledgebases/${kb}/changes?since=never`, 400)
    await call("get", `/knowledgebases/${unknownId()}/changes`, 404)
    await call("get", `/knowledgebases/${kb}/export`, 200)
    await call("get", `/knowledgebases/${unknownId()}/export`, 404)
    expectConformance()
  })
})

describe("provisioning: plans, Portals and end users", () => {
  it("lists tier plans and Portals, and refuses a bad cursor", async () => {
    const org = await organizationId(server)
    const at = "2026-11-01T00:00:00.000Z"
    const [plan, group, portal] = [unknownId(), unknownId(), unknownId()]
    await sql(server, (db) => db`INSERT INTO user_groups (id, organization_id, name, description, plan_id, created_at, updated_at)
      VALUES (${group}, ${org}, 'Gold', NULL, ${plan}, ${at}, ${at})`)
    await sql(server, (db) => db`INSERT INTO tier_plans (id, organization_id, name, credit_allowance, group_id, created_at, archived_at)
      VALUES (${plan}, ${org}, 'Gold', 100, ${group}, ${at}, NULL)`)
    await sql(server, (db) => db`INSERT INTO portals (id, organization_id, name, created_at) VALUES (${portal}, ${org}, 'Members', ${at})`)
    await call("get", "/tier-plans", 200)
    await call("get", "/tier-plans?cursor=junk", 400)
    await call("get", "/portals?limit=1", 200)
    await call("get", "/portals?cursor=junk", 400)
    expectConformance()
  })

  it("provisions, lists, reads, revokes and deletes end users, adjusts their subscriptions, and refuses what it must", async () => {
    const org = await organizationId(server)
    const at = "2026-11-01T00:00:00.000Z"
    const [plan, planGroup] = [unknownId(), unknownId()]
    await sql(server, (db) => db`INSERT INTO user_groups (id, organization_id, name, description, plan_id, created_at, updated_at)
      VALUES (${planGroup}, ${org}, 'Bronze', NULL, ${plan}, ${at}, ${at})`)
    await sql(server, (db) => db`INSERT INTO tier_plans (id, organization_id, name, credit_allowance, group_id, created_at, archived_at)
      VALUES (${plan}, ${org}, 'Bronze', 10, ${planGroup}, ${at}, NULL)`)
    const created = await call("post", "/end-users", 201, { body: { email: "contract@example.com", tierPlanIds: [plan] }, headers: { "idempotency-key": "contract-eu" } })
    await call("post", "/end-users", 201, { body: { email: "contract@example.com", tierPlanIds: [plan] }, headers: { "idempotency-key": "contract-eu" } })
    await call("post", "/end-users", 200, { body: { email: "Contract@example.com", fullName: "C" } })
    await call("post", "/end-users", 400, { body: { email: "nope" } })
    await call("post", "/end-users", 400, { body: { email: "g@example.com", grants: [{ targetKind: "app", targetId: unknownId() }] } })
    await call("post", "/end-users", 409, { body: { email: "contract@example.com", tierPlanIds: [] }, headers: { "idempotency-key": "contract-eu" } })
    await call("post", "/end-users", 422, { body: { email: "t@example.com", tierPlanIds: [unknownId()] } })
    await call("post", "/end-users", 422, { body: { email: "t@example.com", groupIds: [unknownId()] } })
    await call("post", "/end-users", 422, { body: { email: "t@example.com", groupIds: [planGroup] } })
    const id = created.body.endUser.id
    const subscription = created.body.subscriptions[0].id
    await call("get", "/end-users", 200)
    await call("get", "/end-users?email=contract@example.com&limit=1", 200)
    await call("get", "/end-users?cursor=junk", 400)
    await call("get", `/end-users/${id}`, 200)
    await call("get", `/end-users/${unknownId()}`, 404)
    await call("post", `/end-users/${id}/subscriptions/${subscription}/bonus-credits`, 200, { body: { amount: 5, reason: "test" } })
    await call("post", `/end-users/${id}/subscriptions/${subscription}/bonus-credits`, 400, { body: { amount: 0 } })
    await call("post", `/end-users/${id}/subscriptions/${unknownId()}/bonus-credits`, 404, { body: { amount: 5 } })
    await call("delete", `/end-users/${id}/subscriptions/${subscription}`, 200)
    await call("delete", `/end-users/${id}/subscriptions/${subscription}`, 404)
    await call("delete", `/end-users/${id}/grants/${unknownId()}`, 400)
    await call("post", `/end-users/${id}/revoke`, 200)
    await call("post", `/end-users/${unknownId()}/revoke`, 404)
    await call("delete", `/end-users/${id}`, 200)
    await call("delete", `/end-users/${id}`, 404)
    await call("post", "/end-users", 409, { body: { email: "contract@example.com" } })
    const legacy = await server.createOrganization("contract-legacy")
    const legacyOrg = await organizationId(server, "contract-legacy")
    const app = unknownId()
    await sql(server, (db) => db`INSERT INTO apps (id, organization_id, name, description, published_version, created_at, updated_at)
      VALUES (${app}, ${legacyOrg}, 'Legacy', '', NULL, ${at}, ${at})`)
    const granted = await call("post", "/end-users", 201, { key: legacy, body: { email: "l@example.com", grants: [{ targetKind: "app", targetId: app }] } })
    await call("post", "/end-users", 422, { key: legacy, body: { email: "l@example.com", grants: [{ targetKind: "suite", targetId: app }] } })
    const grantId = (await server.request("GET", `/end-users/${granted.body.endUser.id}`, { key: legacy })).body.endUser.grantIds[0]
    await call("delete", `/end-users/${granted.body.endUser.id}/grants/${grantId}`, 200, { key: legacy })
    await call("delete", `/end-users/${granted.body.endUser.id}/grants/${grantId}`, 404, { key: legacy })
    expectConformance()
  })
})

describe("user groups", () => {
  it("creates, lists, reads, changes and deletes groups, and refuses what it must", async () => {
    const group = (await call("post", "/user-groups", 201, { body: { name: "Contract group", description: "d" } })).body.group.id
    const headers = { "idempotency-key": "contract-group-1" }
    await call("post", "/user-groups", 201, { body: { name: "Keyed group" }, headers })
    await call("post", "/user-groups", 201, { body: { name: "Keyed group" }, headers })
    await call("post", "/user-groups", 409, { body: { name: "Another body" }, headers })
    await call("post", "/user-groups", 400, { body: { name: "" } })
    const plan = await createPlan(server, "Contract plan")
    await call("get", "/user-groups", 200)
    await call("get", "/user-groups?limit=1&fields=id,memberCount", 200)
    await call("get", "/user-groups?fields=nope", 400)
    await call("get", `/user-groups/${group}`, 200)
    await call("get", `/user-groups/${plan.groupId}`, 200)
    await call("get", `/user-groups/${unknownId()}`, 404)
    await call("patch", `/user-groups/${group}`, 200, { body: { description: null } })
    await call("patch", `/user-groups/${group}`, 400, { body: {} })
    await call("patch", `/user-groups/${unknownId()}`, 404, { body: { name: "x" } })
    await call("patch", `/user-groups/${plan.groupId}`, 409, { body: { name: "x" } })
    await call("delete", `/user-groups/${plan.groupId}`, 409)
    await call("delete", `/user-groups/${unknownId()}`, 404)
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["groups"] })))
    await call("get", "/user-groups", 403)
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["groups"] })))
    await call("delete", `/user-groups/${group}`, 200)
    expectConformance()
  })

  it("adds and removes members and grants, and refuses what it must", async () => {
    const group = (await call("post", "/user-groups", 201, { body: { name: "Contract members" } })).body.group.id
    const plan = await createPlan(server, "Contract plan 2")
    const person = await insertEndUser(server, { email: "contract-member@example.com" })
    const deleted = await insertEndUser(server, { email: "contract-deleted@example.com", state: "deleted" })
    await call("post", `/user-groups/${group}/members`, 201, { body: { endUserId: person } })
    await call("post", `/user-groups/${group}/members`, 200, { body: { email: "contract-member@example.com" } })
    await call("post", `/user-groups/${group}/members`, 201, { body: { email: "contract-pending@example.com", sendEmail: false } })
    await call("post", `/user-groups/${group}/members`, 400, { body: {} })
    await call("post", `/user-groups/${group}/members`, 404, { body: { endUserId: unknownId() } })
    await call("post", `/user-groups/${group}/members`, 409, { body: { endUserId: deleted } })
    await call("post", `/user-groups/${plan.groupId}/members`, 422, { body: { endUserId: person } })
    await call("delete", `/user-groups/${group}/members/${person}`, 200)
    await call("delete", `/user-groups/${group}/members/${person}`, 200)
    await call("delete", `/user-groups/${plan.groupId}/members/${person}`, 409)
    await call("delete", `/user-groups/${unknownId()}/members/${person}`, 404)
    const app = (await server.request("POST", "/apps", { body: { name: "Contract grant app" } })).body.app.id
    const suite = await createSuite(server, "Contract suite", [app])
    const grant = (await call("post", `/user-groups/${group}/grants`, 201, { body: { targetKind: "app", targetId: app } })).body.grantId
    await call("post", `/user-groups/${group}/grants`, 200, { body: { targetKind: "app", targetId: app } })
    await call("post", `/user-groups/${plan.groupId}/grants`, 201, { body: { targetKind: "suite", targetId: suite } })
    await call("post", `/user-groups/${group}/grants`, 400, { body: { targetKind: "app", targetId: app, deploymentId: "p" } })
    await call("post", `/user-groups/${group}/grants`, 400, { body: { targetKind: "nope", targetId: app } })
    await call("post", `/user-groups/${group}/grants`, 422, { body: { targetKind: "suite", targetId: app } })
    await call("post", `/user-groups/${unknownId()}/grants`, 404, { body: { targetKind: "app", targetId: app } })
    await call("delete", `/user-groups/${group}/grants/${grant}`, 200)
    await call("delete", `/user-groups/${group}/grants/${grant}`, 404)
    expectConformance()
  })
})

describe("portal admissions", () => {
  it("admits, lists and removes groups at a Portal, and refuses what it must", async () => {
    const portal = await insertPortal(server, { name: "Contract portal" })
    const group = (await call("post", "/user-groups", 201, { body: { name: "Contract admitted" } })).body.group.id
    await call("post", `/portals/${portal}/admissions`, 201, { body: { groupId: group } })
    await call("post", `/portals/${portal}/admissions`, 200, { body: { groupId: group } })
    await call("post", `/portals/${portal}/admissions`, 422, { body: { groupId: unknownId() } })
    await call("post", `/portals/${portal}/admissions`, 400, { body: {} })
    await call("post", `/portals/${unknownId()}/admissions`, 404, { body: { groupId: group } })
    await call("get", `/portals/${portal}/admissions`, 200)
    await call("get", `/portals/${portal}/admissions?limit=1`, 200)
    await call("get", `/portals/${portal}/admissions?cursor=junk`, 400)
    await call("get", `/portals/${unknownId()}/admissions`, 404)
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { disable: ["groups"] })))
    await call("get", `/portals/${portal}/admissions`, 403)
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { enable: ["groups"] })))
    await call("delete", `/portals/${portal}/admissions/${group}`, 200)
    await call("delete", `/portals/${unknownId()}/admissions/${group}`, 404)
    expectConformance()
  })
})

it("exercised every operation of the document", () => {
  const operations = Object.values<Record<string, any>>(doc.paths).flatMap((item) =>
    methods.filter((method) => item[method] !== undefined).map((method) => item[method].operationId as string)
  )
  expect(operations.filter((id) => !exercised.has(id))).toEqual([])
})
