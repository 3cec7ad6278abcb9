/**
 * Authoring Agents over HTTP: create (idempotent), draft read and edit, immutable numbered versions,
 * the published view, delete by role, references checked in the caller's organization (every
 * problem named, nothing written), the listings (`include=drafts`, `fields`, `updatedSince`) and
 * isolation between organizations.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, organizationId, personalKey, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

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
beforeEach(() => server.clock.advance(60_000))

const countAgents = async () =>
  (await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM agents`))[0]!.n
const countVersions = async () =>
  (await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM agent_versions`))[0]!.n

const createAgent = async (body: Record<string, unknown> = {}, key?: string) => {
  const response = await server.request("POST", "/agents", { body: { name: `Agent ${randomUUID()}`, ...body }, ...(key ? { key } : {}) })
  expect(response.status).toBe(201)
  return response.body.agent as { id: string; name: string }
}

describe("create and draft", () => {
  it("creates an unpublished Agent (201 {agent}) whose draft reads back with defaults", async () => {
    const created = await server.request("POST", "/agents", {
      body: { name: "  Support  ", description: "Answers from the handbook.", knowledgebaseIds: [knowledgebase] }
    })
    expect(created.status).toBe(201)
    const agent = created.body.agent
    expect(agent).toEqual({
      id: expect.any(String),
      name: "Support",
      description: "Answers from the handbook.",
      instructions: "",
      model: "builtin",
      modelSource: "default",
      greeting: null,
      knowledgebaseIds: [knowledgebase],
      flowIds: [],
      publishedVersion: null,
      createdAt: "2026-11-21T12:01:00.000Z",
      updatedAt: "2026-11-21T12:01:00.000Z"
    })
    const draft = await server.request("GET", `/agents/${agent.id}/draft`)
    expect(draft.status).toBe(200)
    expect(draft.body).toEqual({ agent })
  })

  it("patches only the given properties; an empty patch and unknown properties are 400", async () => {
    const agent = await createAgent({ instructions: "Be brief.", knowledgebaseIds: [knowledgebase] })
    server.clock.advance(1_000)
    const patched = await server.request("PATCH", `/agents/${agent.id}/draft`, { body: { model: "gpt-4o-mini", greeting: "Hi!" } })
    expect(patched.status).toBe(200)
    expect(patched.body.agent).toMatchObject({
      name: agent.name,
      instructions: "Be brief.",
      model: "gpt-4o-mini",
      greeting: "Hi!",
      knowledgebaseIds: [knowledgebase]
    })
    expect(patched.body.agent.updatedAt > patched.body.agent.createdAt).toBe(true)
    expect(expectError(await server.request("PATCH", `/agents/${agent.id}/draft`, { body: {} }), 400, "invalid_request")).toMatch(
      /at least one property/
    )
    expect(
      expectError(await server.request("PATCH", `/agents/${agent.id}/draft`, { body: { nickname: "x" } }), 400, "invalid_request")
    ).toMatch(/nickname/)
    expect(expectError(await server.request("POST", "/agents", { body: { name: "A", colour: "red" } }), 400, "invalid_request")).toMatch(
      /colour/
    )
    expect((await server.request("GET", `/agents/${agent.id}/draft`)).body.agent.model).toBe("gpt-4o-mini")
  })

  it("needs agents:write for drafts and writes", async () => {
    const readOnly = await server.createKey({ name: "reader", scopes: ["agents:read"] })
    const agent = await createAgent()
    expectError(await server.request("POST", "/agents", { key: readOnly, body: { name: "X" } }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/agents/${agent.id}/draft`, { key: readOnly }), 403, "insufficient_scope")
    expectError(await server.request("PATCH", `/agents/${agent.id}/draft`, { key: readOnly, body: { name: "Y" } }), 403, "insufficient_scope")
    expectError(await server.request("POST", `/agents/${agent.id}/publish`, { key: readOnly }), 403, "insufficient_scope")
  })

  it("replays an idempotent create without creating a second Agent", async () => {
    const before = await countAgents()
    const first = await server.request("POST", "/agents", { body: { name: "Once" }, headers: { "idempotency-key": "agent-once" } })
    const again = await server.request("POST", "/agents", { body: { name: "Once" }, headers: { "idempotency-key": "agent-once" } })
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expect(await countAgents()).toBe(before + 1)
    expectError(
      await server.request("POST", "/agents", { body: { name: "Different" }, headers: { "idempotency-key": "agent-once" } }),
      409,
      "conflict"
    )
  })
})

describe("references", () => {
  it("names every missing Knowledgebase and Flow at once (another organization's are missing) and writes nothing", async () => {
    const missing = unknownId()
    const flow = unknownId()
    const before = await countAgents()
    const message = expectError(
      await server.request("POST", "/agents", {
        body: { name: "Refs", knowledgebaseIds: [knowledgebase, otherKnowledgebase, missing, knowledgebase], flowIds: [flow] }
      }),
      400,
      "invalid_request"
    )
    expect(message).toContain(`knowledgebaseIds[1]: no Knowledgebase '${otherKnowledgebase}' in this organization`)
    expect(message).toContain(`knowledgebaseIds[2]: no Knowledgebase '${missing}' in this organization`)
    expect(message).toContain(`knowledgebaseIds[3]: '${knowledgebase}' is already listed at knowledgebaseIds[0]`)
    expect(message).toContain(`flowIds[0]: no Flow '${flow}' in this organization`)
    expect(message).not.toContain("knowledgebaseIds[0]:")
    expect(await countAgents()).toBe(before)
  })

  it("accepts the organization's own Flows and refuses a patch with a foreign reference, leaving the draft as it was", async () => {
    const org = await organizationId(server)
    const flow = randomUUID()
    await sql(
      server,
      (db) => db`INSERT INTO flows (id, organization_id, name, created_at, updated_at) VALUES (${flow}, ${org}, 'Qualify', 'x', 'x')`
    )
    const agent = await createAgent({ flowIds: [flow] })
    const refused = await server.request("PATCH", `/agents/${agent.id}/draft`, {
      body: { name: "Renamed", knowledgebaseIds: [otherKnowledgebase] }
    })
    expect(expectError(refused, 400, "invalid_request")).toContain(`knowledgebaseIds[0]: no Knowledgebase '${otherKnowledgebase}'`)
    const draft = (await server.request("GET", `/agents/${agent.id}/draft`)).body.agent
    expect(draft).toMatchObject({ name: agent.name, knowledgebaseIds: [], flowIds: [flow] })
  })
})

describe("publish and the published view", () => {
  it("numbers versions 1, 2, … and keeps each immutable: draft edits change nothing until the next publish", async () => {
    const agent = await createAgent({ description: "first", instructions: "v1" })
    expectError(await server.request("GET", `/agents/${agent.id}`), 404, "not_found")
    const first = await server.request("POST", `/agents/${agent.id}/publish`)
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ id: agent.id, version: 1, publishedAt: expect.any(String) })
    await server.request("PATCH", `/agents/${agent.id}/draft`, { body: { description: "second", instructions: "v2" } })
    const view = await server.request("GET", `/agents/${agent.id}`)
    expect(view.status).toBe(200)
    expect(view.body.agent).toMatchObject({ id: agent.id, description: "first", instructions: "v1", version: 1, publishedAt: first.body.publishedAt })
    expect((await server.request("GET", `/agents/${agent.id}/draft`)).body.agent).toMatchObject({ description: "second", publishedVersion: 1 })
    server.clock.advance(1_000)
    const second = await server.request("POST", `/agents/${agent.id}/publish`)
    expect(second.body.version).toBe(2)
    expect((await server.request("GET", `/agents/${agent.id}`)).body.agent).toMatchObject({ description: "second", instructions: "v2", version: 2 })
    const kept = await sql(
      server,
      (db) => db<{ version: number; description: string }>`SELECT version, description FROM agent_versions WHERE agent_id = ${agent.id} ORDER BY version`
    )
    expect(kept).toEqual([
      { version: 1, description: "first" },
      { version: 2, description: "second" }
    ])
  })

  it("answers 404 for unknown ids on every endpoint", async () => {
    const id = unknownId()
    expectError(await server.request("GET", `/agents/${id}`), 404, "not_found")
    expectError(await server.request("GET", `/agents/${id}/draft`), 404, "not_found")
    expectError(await server.request("PATCH", `/agents/${id}/draft`, { body: { name: "x" } }), 404, "not_found")
    expectError(await server.request("POST", `/agents/${id}/publish`), 404, "not_found")
    expectError(await server.request("DELETE", `/agents/${id}`), 404, "not_found")
  })
})

describe("delete", () => {
  it("needs the Admin role: a member's personal key is refused and nothing is deleted; an Admin's and an organization key may", async () => {
    const memberKey = await personalKey(server, { email: "member@example.test", role: "member" })
    const adminKey = await personalKey(server, { email: "admin@example.test", role: "admin" })
    const a = await createAgent({ description: "to delete" })
    await server.request("POST", `/agents/${a.id}/publish`)
    const b = await createAgent()
    const versions = await countVersions()
    expectError(await server.request("DELETE", `/agents/${a.id}`, { key: memberKey }), 403, "insufficient_role")
    expect((await server.request("GET", `/agents/${a.id}`)).status).toBe(200)
    expect(await countVersions()).toBe(versions)
    const byAdmin = await server.request("DELETE", `/agents/${a.id}`, { key: adminKey })
    expect(byAdmin.status).toBe(200)
    expect(byAdmin.body).toEqual({ ok: true })
    expectError(await server.request("GET", `/agents/${a.id}`), 404, "not_found")
    expectError(await server.request("GET", `/agents/${a.id}/draft`), 404, "not_found")
    expect(await countVersions()).toBe(versions - 1)
    expect((await server.request("DELETE", `/agents/${b.id}`)).body).toEqual({ ok: true })
    expectError(await server.request("DELETE", `/agents/${b.id}`), 404, "not_found")
  })
})

describe("listings", () => {
  it("lists only published Agents with their published name; include=drafts lists every Agent and needs agents:write", async () => {
    const solo = await startTestServer()
    try {
      const create = async (name: string) => (await solo.request("POST", "/agents", { body: { name, description: `${name} d` } })).body.agent.id as string
      const draftOnly = await create("Draft only")
      solo.clock.advance(1_000)
      const published = await create("Published")
      await solo.request("POST", `/agents/${published}/publish`)
      await solo.request("PATCH", `/agents/${published}/draft`, { body: { name: "Renamed draft" } })
      const listed = await solo.request("GET", "/agents")
      expect(listed.body).toEqual({ agents: [{ id: published, name: "Published", description: "Published d" }], nextCursor: null })
      const withDrafts = await solo.request("GET", "/agents?include=drafts")
      expect(withDrafts.body.agents).toEqual([
        { id: draftOnly, name: "Draft only", description: "Draft only d", published: false, updatedAt: "2026-11-21T12:00:00.000Z" },
        { id: published, name: "Renamed draft", description: "Published d", published: true, updatedAt: "2026-11-21T12:00:01.000Z" }
      ])
      expect((await solo.request("GET", "/agents?include=drafts&fields=id,published")).body.agents).toEqual([
        { id: draftOnly, published: false },
        { id: published, published: true }
      ])
      expectError(await solo.request("GET", "/agents?fields=published"), 400, "invalid_request")
      expect((await solo.request("GET", "/agents?updatedSince=2026-11-21T12:00:01.000Z&include=drafts")).body.agents.map((a: any) => a.id)).toEqual([
        published
      ])
      expect((await solo.request("GET", "/agents?updatedSince=2026-11-21T12:00:02.000Z")).body.agents).toEqual([])
      const reader = await solo.createKey({ name: "reader", scopes: ["agents:read"] })
      expect((await solo.request("GET", "/agents", { key: reader })).status).toBe(200)
      expectError(await solo.request("GET", "/agents?include=drafts", { key: reader }), 403, "insufficient_scope")
    } finally {
      await solo.stop()
    }
  })
})

describe("organizations", () => {
  it("never shows, edits, publishes or deletes another organization's Agent", async () => {
    const theirs = await createAgent({}, otherOrgKey)
    await server.request("POST", `/agents/${theirs.id}/publish`, { key: otherOrgKey })
    expectError(await server.request("GET", `/agents/${theirs.id}`), 404, "not_found")
    expectError(await server.request("GET", `/agents/${theirs.id}/draft`), 404, "not_found")
    expectError(await server.request("PATCH", `/agents/${theirs.id}/draft`, { body: { name: "Mine" } }), 404, "not_found")
    expectError(await server.request("POST", `/agents/${theirs.id}/publish`), 404, "not_found")
    expectError(await server.request("DELETE", `/agents/${theirs.id}`), 404, "not_found")
    expect((await server.request("GET", "/agents?include=drafts&limit=200")).body.agents.map((a: any) => a.id)).not.toContain(theirs.id)
    const still = await server.request("GET", `/agents/${theirs.id}`, { key: otherOrgKey })
    expect(still.body.agent).toMatchObject({ name: theirs.name, version: 1 })
  })
})
