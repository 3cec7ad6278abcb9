/**
 * Authoring Apps over HTTP: create (idempotent), draft read and edit with the Transaction Service
 * (schemas checked as JSON Schema 2020-12 when saved), publish pinning the published version of
 * each member Agent and Flow (a member never published is refused by name), the published view and
 * listing reading the pinned version, delete by role, references and organizations.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, organizationId, personalKey, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let otherOrgKey: string

beforeAll(async () => {
  server = await startTestServer()
  otherOrgKey = await server.createOrganization("other")
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("other", { enable: ["apps"] })))
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const countApps = async () => (await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM apps`))[0]!.n

const create = async (path: "/agents" | "/apps", body: Record<string, unknown> = {}, key?: string) => {
  const response = await server.request("POST", path, { body: { name: `Item ${randomUUID()}`, ...body }, ...(key ? { key } : {}) })
  expect(response.status).toBe(201)
  return (response.body.agent ?? response.body.app) as { id: string; name: string }
}
const publish = async (path: string, key?: string) => {
  const response = await server.request("POST", `${path}/publish`, key ? { key } : {})
  expect(response.status).toBe(200)
  return response.body as { id: string; version: number; publishedAt: string }
}
/** A Flow row as the Flow endpoints (a later step) will keep it, optionally published at `version`. */
const insertFlow = async (version: number | null, slug = "default") => {
  const id = randomUUID()
  const org = await organizationId(server, slug)
  await sql(
    server,
    (db) => db`INSERT INTO flows (id, organization_id, name, published_version, created_at, updated_at)
      VALUES (${id}, ${org}, 'Qualify', ${version}, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`
  )
  return id
}

const inputSchema = { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] }
const outputSchema = { type: "object", properties: { price: { type: "number" } } }

describe("create and draft", () => {
  it("creates an unpublished App whose draft carries its members and a Transaction Service that is off", async () => {
    const agent = await create("/agents")
    const created = await server.request("POST", "/apps", { body: { name: "Quote desk", greeting: "Hello", agentIds: [agent.id] } })
    expect(created.status).toBe(201)
    expect(created.body.app).toEqual({
      id: expect.any(String),
      name: "Quote desk",
      description: "",
      greeting: "Hello",
      agentIds: [agent.id],
      flowIds: [],
      api: { transactionEnabled: false, inputSchema: null, outputSchema: null },
      model: "builtin",
      modelSource: "default",
      publishedVersion: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String)
    })
    expect((await server.request("GET", `/apps/${created.body.app.id}/draft`)).body).toEqual(created.body)
    expectError(await server.request("GET", `/apps/${created.body.app.id}`), 404, "not_found")
    expectError(await server.request("POST", "/apps", { body: { name: "X", api: { transactionEnabled: true } } }), 400, "invalid_request")
  })

  it("sets the Transaction Service with PATCH, changing only the api properties given", async () => {
    const app = await create("/apps")
    const patched = await server.request("PATCH", `/apps/${app.id}/draft`, { body: { api: { transactionEnabled: true, inputSchema, outputSchema } } })
    expect(patched.status).toBe(200)
    expect(patched.body.app.api).toEqual({ transactionEnabled: true, inputSchema, outputSchema })
    const renamed = await server.request("PATCH", `/apps/${app.id}/draft`, { body: { name: "Renamed", api: { transactionEnabled: false } } })
    expect(renamed.body.app).toMatchObject({ name: "Renamed", api: { transactionEnabled: false, inputSchema, outputSchema } })
    expectError(await server.request("PATCH", `/apps/${app.id}/draft`, { body: {} }), 400, "invalid_request")
    expect(
      expectError(await server.request("PATCH", `/apps/${app.id}/draft`, { body: { api: { enabled: true } } }), 400, "invalid_request")
    ).toMatch(/enabled/)
  })

  it("refuses schemas that are not JSON Schema 2020-12, naming each, and keeps the draft as it was", async () => {
    const app = await create("/apps")
    const refused = await server.request("PATCH", `/apps/${app.id}/draft`, {
      body: { api: { transactionEnabled: true, inputSchema: { type: "objekt" }, outputSchema: { type: "object", required: "price" } } }
    })
    const message = expectError(refused, 400, "invalid_request")
    expect(message).toContain("api.inputSchema: not a valid JSON Schema (draft 2020-12)")
    expect(message).toContain("api.outputSchema: not a valid JSON Schema (draft 2020-12)")
    const unresolved = await server.request("PATCH", `/apps/${app.id}/draft`, {
      body: { api: { inputSchema: { $ref: "#/$defs/missing" } } }
    })
    expect(expectError(unresolved, 400, "invalid_request")).toContain("api.inputSchema: not a usable JSON Schema")
    const half = await server.request("PATCH", `/apps/${app.id}/draft`, { body: { api: { transactionEnabled: true, inputSchema } } })
    expect(expectError(half, 400, "invalid_request")).toContain("needs both inputSchema and outputSchema")
    expect((await server.request("GET", `/apps/${app.id}/draft`)).body.app.api).toEqual({
      transactionEnabled: false,
      inputSchema: null,
      outputSchema: null
    })
  })

  it("replays an idempotent create without creating a second App", async () => {
    const before = await countApps()
    const first = await server.request("POST", "/apps", { body: { name: "Once" }, headers: { "idempotency-key": "app-once" } })
    const again = await server.request("POST", "/apps", { body: { name: "Once" }, headers: { "idempotency-key": "app-once" } })
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expect(await countApps()).toBe(before + 1)
  })
})

describe("references", () => {
  it("names every member that is not the organization's and writes nothing", async () => {
    const theirAgent = await create("/agents", {}, otherOrgKey)
    const theirFlow = await insertFlow(1, "other")
    const mine = await create("/agents")
    const missing = unknownId()
    const before = await countApps()
    const message = expectError(
      await server.request("POST", "/apps", { body: { name: "Refs", agentIds: [mine.id, theirAgent.id, missing], flowIds: [theirFlow] } }),
      400,
      "invalid_request"
    )
    expect(message).toContain(`agentIds[1]: no Agent '${theirAgent.id}' in this organization`)
    expect(message).toContain(`agentIds[2]: no Agent '${missing}' in this organization`)
    expect(message).toContain(`flowIds[0]: no Flow '${theirFlow}' in this organization`)
    expect(message).not.toContain("agentIds[0]")
    expect(await countApps()).toBe(before)
  })
})

describe("publish pins members", () => {
  it("refuses to publish while a member was never published, naming each, and publishes nothing", async () => {
    const agent = await create("/agents")
    const flow = await insertFlow(null)
    const app = await create("/apps", { agentIds: [agent.id], flowIds: [flow] })
    const message = expectError(await server.request("POST", `/apps/${app.id}/publish`), 400, "invalid_request")
    expect(message).toContain(`agentIds[0]: Agent '${agent.id}' was never published`)
    expect(message).toContain(`flowIds[0]: Flow '${flow}' was never published`)
    expectError(await server.request("GET", `/apps/${app.id}`), 404, "not_found")
    expect((await server.request("GET", `/apps/${app.id}/draft`)).body.app.publishedVersion).toBeNull()
  })

  it("pins each member's published version: republishing a member changes nothing until the App is republished", async () => {
    const agent = await create("/agents")
    await publish(`/agents/${agent.id}`)
    const flow = await insertFlow(3)
    const app = await create("/apps", { description: "Prices orders", greeting: "Hi", agentIds: [agent.id], flowIds: [flow] })
    await server.request("PATCH", `/apps/${app.id}/draft`, { body: { api: { transactionEnabled: true, inputSchema, outputSchema } } })
    const first = await publish(`/apps/${app.id}`)
    expect(first.version).toBe(1)
    const view = await server.request("GET", `/apps/${app.id}`)
    expect(view.body).toEqual({
      app: {
        id: app.id,
        name: app.name,
        description: "Prices orders",
        services: { conversation: true, transaction: true },
        inputSchema,
        outputSchema,
        greeting: "Hi",
        agents: [{ id: agent.id, version: 1 }],
        flows: [{ id: flow, version: 3 }],
        model: "builtin",
        modelSource: "default",
        version: 1,
        publishedAt: first.publishedAt
      }
    })
    expect(await publish(`/agents/${agent.id}`)).toMatchObject({ version: 2 })
    await server.request("PATCH", `/apps/${app.id}/draft`, { body: { description: "Changed", api: { transactionEnabled: false } } })
    const unchanged = (await server.request("GET", `/apps/${app.id}`)).body.app
    expect(unchanged).toMatchObject({ description: "Prices orders", agents: [{ id: agent.id, version: 1 }], services: { transaction: true } })
    const listed = (await server.request("GET", "/apps?limit=200")).body.apps.find((item: any) => item.id === app.id)
    expect(listed).toEqual({
      id: app.id,
      name: app.name,
      description: "Prices orders",
      services: { conversation: true, transaction: true },
      inputSchema,
      outputSchema
    })
    const second = await publish(`/apps/${app.id}`)
    expect(second.version).toBe(2)
    const republished = (await server.request("GET", `/apps/${app.id}`)).body.app
    expect(republished).toMatchObject({
      description: "Changed",
      agents: [{ id: agent.id, version: 2 }],
      services: { conversation: true, transaction: false },
      inputSchema: null,
      version: 2
    })
    const kept = await sql(
      server,
      (db) => db<{ version: number; definition: string }>`SELECT version, definition FROM app_versions WHERE app_id = ${app.id} ORDER BY version`
    )
    expect(kept.map((row) => JSON.parse(row.definition).agents)).toEqual([[{ id: agent.id, version: 1 }], [{ id: agent.id, version: 2 }]])
  })

  it("lists never-published Apps only with include=drafts, which needs apps:write", async () => {
    const app = await create("/apps")
    expect((await server.request("GET", "/apps?limit=200")).body.apps.map((a: any) => a.id)).not.toContain(app.id)
    const withDrafts = (await server.request("GET", "/apps?include=drafts&limit=200")).body.apps
    expect(withDrafts.find((a: any) => a.id === app.id)).toMatchObject({ published: false })
    const reader = await server.createKey({ name: "reader", scopes: ["apps:read"] })
    expectError(await server.request("GET", "/apps?include=drafts", { key: reader }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/apps/${app.id}/draft`, { key: reader }), 403, "insufficient_scope")
    expectError(await server.request("POST", "/apps", { key: reader, body: { name: "X" } }), 403, "insufficient_scope")
  })
})

describe("delete and organizations", () => {
  it("needs the Admin role: a member's personal key is refused and nothing is deleted", async () => {
    const memberKey = await personalKey(server, { email: "member@apps.test", role: "member" })
    const adminKey = await personalKey(server, { email: "admin@apps.test", role: "admin" })
    const app = await create("/apps")
    await publish(`/apps/${app.id}`)
    expectError(await server.request("DELETE", `/apps/${app.id}`, { key: memberKey }), 403, "insufficient_role")
    expect((await server.request("GET", `/apps/${app.id}`)).status).toBe(200)
    expect((await server.request("DELETE", `/apps/${app.id}`, { key: adminKey })).body).toEqual({ ok: true })
    expectError(await server.request("GET", `/apps/${app.id}`), 404, "not_found")
    const versions = await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM app_versions WHERE app_id = ${app.id}`)
    expect(versions[0]!.n).toBe(0)
    const other = await create("/apps")
    expect((await server.request("DELETE", `/apps/${other.id}`)).body).toEqual({ ok: true })
  })

  it("never shows, edits, publishes or deletes another organization's App", async () => {
    const theirs = await create("/apps", {}, otherOrgKey)
    await publish(`/apps/${theirs.id}`, otherOrgKey)
    expectError(await server.request("GET", `/apps/${theirs.id}`), 404, "not_found")
    expectError(await server.request("GET", `/apps/${theirs.id}/draft`), 404, "not_found")
    expectError(await server.request("PATCH", `/apps/${theirs.id}/draft`, { body: { name: "Mine" } }), 404, "not_found")
    expectError(await server.request("POST", `/apps/${theirs.id}/publish`), 404, "not_found")
    expectError(await server.request("DELETE", `/apps/${theirs.id}`), 404, "not_found")
    expect((await server.request("GET", `/apps/${theirs.id}`, { key: otherOrgKey })).body.app.version).toBe(1)
  })
})
