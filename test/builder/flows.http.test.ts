/**
 * Authoring Flows over HTTP: create (idempotent) with every problem of a definition named in one
 * 400 and nothing written, draft read and edit (the whole draft checked again), immutable numbered
 * versions, the published view and listing with `inputs` and their JSON Schema (which Ajv compiles
 * and which agrees with `validateFlowInputs`), delete by role, references checked in the caller's
 * organization, isolation between organizations, and an App pinning a published Flow.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Effect, Either } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { checkFlowDefinition } from "../../server/builder/flows/definition.js"
import { validateFlowInputs } from "../../server/builder/flows/inputs.js"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, personalKey, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

let server: TestServer
let otherOrgKey: string
let knowledgebase: string
let otherKnowledgebase: string

beforeAll(async () => {
  server = await startTestServer()
  otherOrgKey = await server.createOrganization("other")
  knowledgebase = (await server.request("POST", "/knowledgebases", { body: { name: "Handbook" } })).body.knowledgebase.id
  otherKnowledgebase = (await server.request("POST", "/knowledgebases", { key: otherOrgKey, body: { name: "Theirs" } })).body.knowledgebase.id
})
afterAll(() => server.stop())
// Each test starts with a fresh rate-limit window (120 requests per minute per key).
beforeEach(() => server.clock.advance(60_000))

const countFlows = async () => (await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM flows`))[0]!.n
const countVersions = async () => (await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM flow_versions`))[0]!.n

/** A small valid definition: one required question, one template step. */
const lead = (extra: Record<string, unknown> = {}) => ({
  name: `Lead ${randomUUID()}`,
  questions: [{ label: "Company name", type: "text", required: true }],
  steps: [{ type: "template", name: "summary", template: "Lead: {{company_name}}" }],
  ...extra
})

const createFlow = async (body: Record<string, unknown> = lead(), key?: string) => {
  const response = await server.request("POST", "/flows", { body, ...(key ? { key } : {}) })
  expect(response.status, response.text).toBe(201)
  return response.body.flow as { id: string; name: string }
}
const publish = async (id: string, key?: string) => {
  const response = await server.request("POST", `/flows/${id}/publish`, key ? { key } : {})
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; version: number; publishedAt: string }
}

describe("create and draft", () => {
  it("creates an unpublished Flow (201 {flow}) whose draft shows its definition, inputs and their schema", async () => {
    const body = {
      name: "  Lead qualification  ",
      description: "Qualifies inbound leads.",
      questions: [
        { label: " Company name ", type: "text", required: true },
        { label: "Budget", type: "select", options: ["small", "large"] }
      ],
      steps: [{ type: "template", name: "summary", template: "{{company_name}} ({{budget}})" }],
      output: "Summary: {{summary}}"
    }
    const created = await server.request("POST", "/flows", { body })
    expect(created.status).toBe(201)
    const flow = created.body.flow
    expect(flow).toEqual({
      id: expect.any(String),
      name: "Lead qualification",
      description: "Qualifies inbound leads.",
      questions: [
        { label: "Company name", type: "text", required: true },
        { label: "Budget", type: "select", options: ["small", "large"] }
      ],
      steps: body.steps,
      output: "Summary: {{summary}}",
      conversational: false,
      inputs: [
        { name: "company_name", label: "Company name", type: "text", required: true },
        { name: "budget", label: "Budget", type: "select", options: ["small", "large"], required: false }
      ],
      inputsSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: {
          company_name: { title: "Company name", type: "string", minLength: 1 },
          budget: { title: "Budget", enum: ["small", "large"] }
        },
        required: ["company_name"],
        additionalProperties: false
      },
      defaultModel: "builtin",
      publishedVersion: null,
      createdAt: expect.any(String),
      updatedAt: flow.createdAt
    })
    const draft = await server.request("GET", `/flows/${flow.id}/draft`)
    expect(draft.status).toBe(200)
    expect(draft.body).toEqual({ flow })
  })

  it("takes a Flow without questions as conversational: {{message}} is its one variable", async () => {
    const flow = (
      await server.request("POST", "/flows", {
        body: { name: "Echo", questions: [], steps: [{ type: "template", name: "echo", template: "You said {{message}}" }] }
      })
    ).body.flow
    expect(flow).toMatchObject({ conversational: true, inputs: [], output: null })
    expect(flow.inputsSchema).toMatchObject({ properties: {}, required: [], additionalProperties: false })
  })

  it("names every problem of a definition in one 400, from different fields, and writes nothing", async () => {
    const before = await countFlows()
    const message = expectError(
      await server.request("POST", "/flows", {
        body: {
          name: "",
          colour: "red",
          questions: [
            { label: "Company name", type: "text" },
            { label: "company-name", type: "email" },
            { label: "Budget", type: "select" },
            { label: "Age", type: "integer" }
          ],
          steps: [
            { type: "template", name: "summary", template: "{{company_nam}} {{budget}}" },
            { type: "prompt", name: "Bad Name", template: "x" }
          ]
        }
      }),
      400,
      "invalid_request"
    )
    expect(message).toContain("name: name must be 1 to 200 characters")
    expect(message).toContain("colour")
    expect(message).toContain("questions[1].label: \"company-name\" gives the parameter name company_name, as questions[0].label \"Company name\" does")
    expect(message).toContain("questions[2].options: a select question needs options")
    expect(message).toContain("questions[3].type: type must be one of")
    expect(message).toContain("steps[0] (summary): unknown variable {{company_nam}} in template")
    expect(message).toContain("steps[1].name: a step name must be")
    expect(await countFlows()).toBe(before)
  })

  it("refuses colliding parameter names and an unknown template variable naming the step", async () => {
    const collision = expectError(
      await server.request("POST", "/flows", {
        body: lead({ questions: [{ label: "Company name", type: "text" }, { label: "Company  Name!", type: "text" }] })
      }),
      400,
      "invalid_request"
    )
    expect(collision).toMatch(/^questions\[1\]\.label: "Company {2}Name!" gives the parameter name company_name/)
    const unknown = expectError(
      await server.request("POST", "/flows", {
        body: lead({
          steps: [
            { type: "template", name: "summary", template: "{{company_name}}" },
            { type: "search", name: "found", query: "{{summry}}" }
          ]
        })
      }),
      400,
      "invalid_request"
    )
    expect(unknown).toBe("steps[1] (found): unknown variable {{summry}} in query.")
  })

  it("refuses bodies that are not JSON objects and needs flows:write to author", async () => {
    expectError(await server.request("POST", "/flows", { body: "{not json" }), 400, "invalid_request")
    expect(expectError(await server.request("POST", "/flows", { body: "[1]" }), 400, "invalid_request")).toMatch(/JSON object/)
    const reader = await server.createKey({ name: "flow reader", scopes: ["flows:read"] })
    const flow = await createFlow()
    expectError(await server.request("POST", "/flows", { key: reader, body: lead() }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/flows/${flow.id}/draft`, { key: reader }), 403, "insufficient_scope")
    expectError(await server.request("PATCH", `/flows/${flow.id}/draft`, { key: reader, body: { name: "x" } }), 403, "insufficient_scope")
    expectError(await server.request("POST", `/flows/${flow.id}/publish`, { key: reader }), 403, "insufficient_scope")
    expectError(await server.request("DELETE", `/flows/${flow.id}`, { key: reader }), 403, "insufficient_scope")
  })

  it("replays an idempotent create (and its refusal) without creating a second Flow", async () => {
    const before = await countFlows()
    const body = lead()
    const headers = { "idempotency-key": "flow-once" }
    const first = await server.request("POST", "/flows", { body, headers })
    const again = await server.request("POST", "/flows", { body, headers })
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expect(await countFlows()).toBe(before + 1)
    expectError(await server.request("POST", "/flows", { body: lead(), headers }), 409, "conflict")
    const bad = { ...lead(), questions: [{ label: "?", type: "text" }] }
    const refused = await server.request("POST", "/flows", { body: bad, headers: { "idempotency-key": "flow-refused" } })
    const refusedAgain = await server.request("POST", "/flows", { body: bad, headers: { "idempotency-key": "flow-refused" } })
    expectError(refused, 400, "invalid_request")
    expect(refusedAgain.status).toBe(400)
    expect(refusedAgain.headers.get("idempotent-replayed")).toBe("true")
    expect(await countFlows()).toBe(before + 1)
  })
})

describe("draft edits", () => {
  it("replaces only the given properties; output null removes the output template", async () => {
    const flow = await createFlow(lead({ description: "first", output: "Out: {{summary}}" }))
    server.clock.advance(1_000)
    const patched = await server.request("PATCH", `/flows/${flow.id}/draft`, {
      body: { questions: [{ label: "Company name", type: "text" }, { label: "Employees", type: "number", required: true }] }
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.flow).toMatchObject({
      name: flow.name,
      description: "first",
      output: "Out: {{summary}}",
      inputs: [
        { name: "company_name", required: false },
        { name: "employees", type: "number", required: true }
      ]
    })
    expect(patched.body.flow.updatedAt > patched.body.flow.createdAt).toBe(true)
    const removed = await server.request("PATCH", `/flows/${flow.id}/draft`, { body: { output: null, description: "" } })
    expect(removed.body.flow).toMatchObject({ output: null, description: "" })
  })

  it("checks the whole patched draft: every problem named, the draft left as it was", async () => {
    const flow = await createFlow()
    const before = (await server.request("GET", `/flows/${flow.id}/draft`)).body
    // Renaming the question leaves the step's {{company_name}} unknown: only the whole draft shows it.
    const renamed = expectError(
      await server.request("PATCH", `/flows/${flow.id}/draft`, { body: { questions: [{ label: "Organisation", type: "text" }] } }),
      400,
      "invalid_request"
    )
    expect(renamed).toBe("steps[0] (summary): unknown variable {{company_name}} in template.")
    const several = expectError(
      await server.request("PATCH", `/flows/${flow.id}/draft`, {
        body: { name: "", questions: [{ label: "Company name", type: "colour" }], steps: [{ type: "template", name: "s", template: "{{nope}}" }] }
      }),
      400,
      "invalid_request"
    )
    expect(several).toContain("name: name must be 1 to 200 characters")
    expect(several).toContain("questions[0].type: type must be one of")
    expect(several).toContain("steps[0] (s): unknown variable {{nope}} in template")
    expect(expectError(await server.request("PATCH", `/flows/${flow.id}/draft`, { body: {} }), 400, "invalid_request")).toMatch(/at least one property/)
    expect(expectError(await server.request("PATCH", `/flows/${flow.id}/draft`, { body: { nickname: "x" } }), 400, "invalid_request")).toMatch(/nickname/)
    expectError(await server.request("PATCH", `/flows/${flow.id}/draft`, { body: "[]" }), 400, "invalid_request")
    expect((await server.request("GET", `/flows/${flow.id}/draft`)).body).toEqual(before)
  })
})

describe("publish and the published view", () => {
  it("numbers versions 1, 2, … and keeps each immutable: draft edits change nothing until the next publish", async () => {
    const flow = await createFlow(lead({ description: "first" }))
    expectError(await server.request("GET", `/flows/${flow.id}`), 404, "not_found")
    const first = await publish(flow.id)
    expect(first).toEqual({ id: flow.id, version: 1, publishedAt: expect.any(String) })
    await server.request("PATCH", `/flows/${flow.id}/draft`, {
      body: { description: "second", questions: [{ label: "Company name", type: "text" }, { label: "Budget", type: "number" }] }
    })
    const view = await server.request("GET", `/flows/${flow.id}`)
    expect(view.status).toBe(200)
    expect(view.body.flow).toEqual({
      id: flow.id,
      name: flow.name,
      description: "first",
      conversational: false,
      inputs: [{ name: "company_name", label: "Company name", type: "text", required: true }],
      inputsSchema: expect.objectContaining({ required: ["company_name"] }),
      version: 1,
      publishedAt: first.publishedAt
    })
    expect((await server.request("GET", `/flows/${flow.id}/draft`)).body.flow).toMatchObject({ description: "second", publishedVersion: 1 })
    server.clock.advance(1_000)
    expect((await publish(flow.id)).version).toBe(2)
    const second = (await server.request("GET", `/flows/${flow.id}`)).body.flow
    expect(second).toMatchObject({ description: "second", version: 2 })
    expect(second.inputs.map((input: { name: string }) => input.name)).toEqual(["company_name", "budget"])
    const kept = await sql(
      server,
      (db) => db<{ version: number; description: string }>`SELECT version, description FROM flow_versions WHERE flow_id = ${flow.id} ORDER BY version`
    )
    expect(kept).toEqual([
      { version: 1, description: "first" },
      { version: 2, description: "second" }
    ])
  })

  it("answers 404 for unknown ids on every endpoint", async () => {
    const id = unknownId()
    expectError(await server.request("GET", `/flows/${id}`), 404, "not_found")
    expectError(await server.request("GET", `/flows/${id}/draft`), 404, "not_found")
    expectError(await server.request("PATCH", `/flows/${id}/draft`, { body: { name: "x" } }), 404, "not_found")
    expectError(await server.request("POST", `/flows/${id}/publish`), 404, "not_found")
    expectError(await server.request("DELETE", `/flows/${id}`), 404, "not_found")
  })
})

describe("inputs and their JSON Schema", () => {
  const everyType = {
    name: "Every type",
    questions: [
      { label: "Company name", type: "text", required: true },
      { label: "Notes", type: "long_text" },
      { label: "Employees", type: "number", required: true },
      { label: "Existing customer", type: "boolean" },
      { label: "Budget", type: "select", options: ["small", "large"], required: true },
      { label: "Products", type: "multi_select", options: ["chat", "search", "flows"] },
      { label: "Email", type: "email", required: true, description: "Where we answer." },
      { label: "Website", type: "url" },
      { label: "Start date", type: "date" }
    ],
    steps: [{ type: "template", name: "summary", template: "{{company_name}} {{budget}} {{products}}" }]
  }
  const good = { company_name: "Acme", employees: 12, budget: "small", email: "ceo@acme.example" }
  const samples: ReadonlyArray<unknown> = [
    good,
    { ...good, notes: "", existing_customer: false, products: ["chat", "flows"], website: "https://acme.example", start_date: "2026-12-01" },
    {},
    { ...good, company_name: "" },
    { ...good, employees: "12" },
    { ...good, budget: "medium" },
    { ...good, products: [] }, // an optional multi_select may choose nothing
    { ...good, products: ["chat", "chat"] },
    { ...good, products: ["fax"] },
    { ...good, email: "not an email" },
    { ...good, website: "mailto:ceo@acme.example" },
    { ...good, website: "ftp://acme.example" },
    { ...good, start_date: "2026-13-45" },
    { ...good, start_date: "tomorrow" },
    { ...good, existing_customer: "yes" },
    { ...good, colour: "red" },
    { ...good, constructor: "x" },
    [good],
    "Acme",
    null
  ]

  it("GET /flows/{id} and GET /flows show the inputs and a JSON Schema that Ajv 2020 compiles and that agrees with the run's validation", async () => {
    const solo = await startTestServer()
    try {
      const id = (await solo.request("POST", "/flows", { body: everyType })).body.flow.id as string
      expect((await solo.request("POST", `/flows/${id}/publish`)).status).toBe(200)
      const one = (await solo.request("GET", `/flows/${id}`)).body.flow
      const listed = (await solo.request("GET", "/flows")).body.flows
      expect(listed).toEqual([one])
      expect(one.inputs).toEqual([
        { name: "company_name", label: "Company name", type: "text", required: true },
        { name: "notes", label: "Notes", type: "long_text", required: false },
        { name: "employees", label: "Employees", type: "number", required: true },
        { name: "existing_customer", label: "Existing customer", type: "boolean", required: false },
        { name: "budget", label: "Budget", type: "select", options: ["small", "large"], required: true },
        { name: "products", label: "Products", type: "multi_select", options: ["chat", "search", "flows"], required: false },
        { name: "email", label: "Email", type: "email", required: true, description: "Where we answer." },
        { name: "website", label: "Website", type: "url", required: false },
        { name: "start_date", label: "Start date", type: "date", required: false }
      ])
      const ajv = new Ajv2020({ strict: true, allErrors: true })
      addFormats(ajv)
      const validate = ajv.compile(one.inputsSchema)
      const checked = Either.getOrThrow(checkFlowDefinition(everyType))
      const verdicts = samples.map((sample) => ({ sample, schema: validate(sample), run: Either.isRight(validateFlowInputs(checked, sample)) }))
      expect(verdicts.filter(({ schema, run }) => schema !== run)).toEqual([])
      expect(verdicts.filter(({ schema }) => schema).map(({ sample }) => sample)).toEqual([samples[0], samples[1], samples[6]])
    } finally {
      await solo.stop()
    }
  })
})

describe("listings", () => {
  it("lists only published Flows; a never-published one is absent; include=drafts, fields, updatedSince and paging", async () => {
    const solo = await startTestServer()
    try {
      const create = async (name: string) => (await solo.request("POST", "/flows", { body: { ...lead(), name } })).body.flow.id as string
      const draftOnly = await create("Draft only")
      solo.clock.advance(1_000)
      const published = await create("Published")
      solo.clock.advance(1_000)
      const second = await create("Second")
      await solo.request("POST", `/flows/${published}/publish`)
      solo.clock.advance(1_000)
      await solo.request("POST", `/flows/${second}/publish`)
      await solo.request("PATCH", `/flows/${published}/draft`, { body: { name: "Renamed draft" } })
      const listed = await solo.request("GET", "/flows")
      expect(listed.body.flows.map((flow: any) => [flow.id, flow.name, flow.version])).toEqual([
        [published, "Published", 1],
        [second, "Second", 1]
      ])
      expect(listed.body.nextCursor).toBeNull()
      expectError(await solo.request("GET", `/flows/${draftOnly}`), 404, "not_found")
      const firstPage = await solo.request("GET", "/flows?limit=1&fields=id,inputs")
      expect(firstPage.body.flows).toEqual([{ id: published, inputs: [{ name: "company_name", label: "Company name", type: "text", required: true }] }])
      const nextPage = await solo.request("GET", `/flows?limit=1&fields=id,inputs&cursor=${firstPage.body.nextCursor}`)
      expect(nextPage.body).toEqual({ flows: [{ id: second, inputs: expect.any(Array) }], nextCursor: null })
      expectError(await solo.request("GET", `/flows?limit=1&cursor=${firstPage.body.nextCursor}&include=drafts`), 400, "invalid_request")
      expect((await solo.request("GET", "/flows?updatedSince=2026-11-21T12:00:03.000Z")).body.flows.map((f: any) => f.id)).toEqual([second])
      const withDrafts = await solo.request("GET", "/flows?include=drafts&fields=id,name,published")
      expect(withDrafts.body.flows).toEqual([
        { id: draftOnly, name: "Draft only", published: false },
        { id: published, name: "Renamed draft", published: true },
        { id: second, name: "Second", published: true }
      ])
      expectError(await solo.request("GET", "/flows?fields=published"), 400, "invalid_request")
      expectError(await solo.request("GET", "/flows?include=drafts&fields=inputs"), 400, "invalid_request")
      const reader = await solo.createKey({ name: "reader", scopes: ["flows:read"] })
      expect((await solo.request("GET", "/flows", { key: reader })).status).toBe(200)
      expect((await solo.request("GET", `/flows/${published}`, { key: reader })).status).toBe(200)
      expectError(await solo.request("GET", "/flows?include=drafts", { key: reader }), 403, "insufficient_scope")
      const agentsOnly = await solo.createKey({ name: "agents", scopes: ["agents:read"] })
      expectError(await solo.request("GET", "/flows", { key: agentsOnly }), 403, "insufficient_scope")
    } finally {
      await solo.stop()
    }
  })
})

describe("delete", () => {
  it("needs the Admin role: a member's personal key is refused and nothing is deleted; an Admin's and an organization key may", async () => {
    const memberKey = await personalKey(server, { email: "member@flows.test", role: "member" })
    const adminKey = await personalKey(server, { email: "admin@flows.test", role: "admin" })
    const a = await createFlow()
    await publish(a.id)
    const b = await createFlow()
    const versions = await countVersions()
    expectError(await server.request("DELETE", `/flows/${a.id}`, { key: memberKey }), 403, "insufficient_role")
    expect((await server.request("GET", `/flows/${a.id}`)).status).toBe(200)
    expect(await countVersions()).toBe(versions)
    const byAdmin = await server.request("DELETE", `/flows/${a.id}`, { key: adminKey })
    expect(byAdmin.status).toBe(200)
    expect(byAdmin.body).toEqual({ ok: true })
    expectError(await server.request("GET", `/flows/${a.id}`), 404, "not_found")
    expectError(await server.request("GET", `/flows/${a.id}/draft`), 404, "not_found")
    expect(await countVersions()).toBe(versions - 1)
    expect((await server.request("DELETE", `/flows/${b.id}`)).body).toEqual({ ok: true })
    expectError(await server.request("DELETE", `/flows/${b.id}`), 404, "not_found")
  })
})

describe("references", () => {
  const agentOf = async (key?: string) =>
    (await server.request("POST", "/agents", { body: { name: `Agent ${randomUUID()}` }, ...(key ? { key } : {}) })).body.agent.id as string

  it("names every Knowledgebase and Agent not in the organization (another organization's included) by path, and writes nothing", async () => {
    const theirAgent = await agentOf(otherOrgKey)
    const missing = unknownId()
    const before = await countFlows()
    const message = expectError(
      await server.request("POST", "/flows", {
        body: lead({
          steps: [
            { type: "search", name: "found", query: "{{company_name}}", knowledgebaseIds: [knowledgebase, otherKnowledgebase, missing, knowledgebase] },
            { type: "agent", name: "asked", agentId: theirAgent, message: "{{found}}" }
          ]
        })
      }),
      400,
      "invalid_request"
    )
    expect(message).toBe(
      [
        `steps[0].knowledgebaseIds[1]: no Knowledgebase '${otherKnowledgebase}' in this organization`,
        `steps[0].knowledgebaseIds[2]: no Knowledgebase '${missing}' in this organization`,
        `steps[0].knowledgebaseIds[3]: '${knowledgebase}' is already listed at steps[0].knowledgebaseIds[0]`,
        `steps[1].agentId: no Agent '${theirAgent}' in this organization`
      ].join("; ") + "."
    )
    expect(await countFlows()).toBe(before)
  })

  it("accepts the organization's own, refuses a patch with a foreign one, and names a reference deleted before publish", async () => {
    const agent = await agentOf()
    const steps = [
      { type: "search", name: "found", query: "{{company_name}}", knowledgebaseIds: [knowledgebase] },
      { type: "agent", name: "asked", agentId: agent, message: "{{found}}" }
    ]
    const flow = await createFlow(lead({ steps }))
    const refused = await server.request("PATCH", `/flows/${flow.id}/draft`, {
      body: { name: "Renamed", steps: [{ ...steps[0], knowledgebaseIds: [otherKnowledgebase] }, steps[1]] }
    })
    expect(expectError(refused, 400, "invalid_request")).toBe(`steps[0].knowledgebaseIds[0]: no Knowledgebase '${otherKnowledgebase}' in this organization.`)
    expect((await server.request("GET", `/flows/${flow.id}/draft`)).body.flow).toMatchObject({ name: flow.name, steps })
    expect((await server.request("DELETE", `/agents/${agent}`)).status).toBe(200)
    const versions = await countVersions()
    expect(expectError(await server.request("POST", `/flows/${flow.id}/publish`), 400, "invalid_request")).toBe(
      `steps[1].agentId: no Agent '${agent}' in this organization.`
    )
    expect(await countVersions()).toBe(versions)
    expectError(await server.request("GET", `/flows/${flow.id}`), 404, "not_found")
  })
})

describe("organizations", () => {
  it("never shows, edits, publishes or deletes another organization's Flow", async () => {
    const theirs = await createFlow(lead(), otherOrgKey)
    await publish(theirs.id, otherOrgKey)
    expectError(await server.request("GET", `/flows/${theirs.id}`), 404, "not_found")
    expectError(await server.request("GET", `/flows/${theirs.id}/draft`), 404, "not_found")
    expectError(await server.request("PATCH", `/flows/${theirs.id}/draft`, { body: { name: "Mine" } }), 404, "not_found")
    expectError(await server.request("POST", `/flows/${theirs.id}/publish`), 404, "not_found")
    expectError(await server.request("DELETE", `/flows/${theirs.id}`), 404, "not_found")
    const mine = (await server.request("GET", "/flows?include=drafts&limit=200")).body.flows.map((flow: { id: string }) => flow.id)
    expect(mine).not.toContain(theirs.id)
    expect((await server.request("GET", `/flows/${theirs.id}`, { key: otherOrgKey })).body.flow).toMatchObject({ id: theirs.id, version: 1 })
  })
})

describe("Apps pin published Flows", () => {
  it("an App naming a Flow publishes once the Flow is published, and shows the pinned Flow version", async () => {
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { enable: ["apps"] })))
    const flow = await createFlow()
    const app = (await server.request("POST", "/apps", { body: { name: "Lead desk", flowIds: [flow.id] } })).body.app.id as string
    expect(expectError(await server.request("POST", `/apps/${app}/publish`), 400, "invalid_request")).toContain(
      `flowIds[0]: Flow '${flow.id}' was never published`
    )
    await publish(flow.id)
    expect((await server.request("POST", `/apps/${app}/publish`)).body.version).toBe(1)
    await publish(flow.id)
    expect((await server.request("GET", `/apps/${app}`)).body.app.flows).toEqual([{ id: flow.id, version: 1 }])
    expect((await server.request("POST", `/apps/${app}/publish`)).body.version).toBe(2)
    expect((await server.request("GET", `/apps/${app}`)).body.app.flows).toEqual([{ id: flow.id, version: 2 }])
  })
})
