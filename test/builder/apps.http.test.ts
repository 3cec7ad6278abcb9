/**
 * `GET /apps`: the organization's `apps` gate (403 `api_disabled` until it is on), the published
 * listing with each App's pinned contract, `include=drafts` (needs `apps:write`), `fields` per
 * listing, `updatedSince` (inclusive) and paging.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { expectError, organizationId, sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let draftOnly: string
let published: string
let contract: string

beforeAll(async () => {
  server = await startTestServer()
  const org = await organizationId(server)
  const insertApp = async (name: string, at: string, version: { at: string; transaction: boolean } | null) => {
    const id = randomUUID()
    await sql(
      server,
      (db) => db`INSERT INTO apps (id, organization_id, name, description, published_version, created_at, updated_at)
        VALUES (${id}, ${org}, ${`${name} (draft name)`}, 'draft', ${version ? 1 : null}, ${at}, ${at})`
    )
    if (version) {
      await sql(
        server,
        (db) => db`INSERT INTO app_versions (app_id, version, name, description, conversation_enabled, transaction_enabled,
            input_schema, output_schema, published_at)
          VALUES (${id}, 1, ${name}, 'published', 1, ${version.transaction ? 1 : 0},
            ${JSON.stringify({ type: "object", properties: { sku: { type: "string" } } })},
            ${JSON.stringify({ type: "object", properties: { price: { type: "number" } } })}, ${version.at})`
      )
    }
    return id
  }
  draftOnly = await insertApp("Draft", "2026-11-01T00:00:00.000Z", null)
  published = await insertApp("Chat", "2026-11-02T00:00:00.000Z", { at: "2026-11-03T00:00:00.000Z", transaction: false })
  contract = await insertApp("Quote desk", "2026-11-04T00:00:00.000Z", { at: "2026-11-05T00:00:00.000Z", transaction: true })
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const setGates = (changes: { enable?: Array<"apps">; disable?: Array<"apps"> }) =>
  server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", changes)))

describe("the apps gate", () => {
  it("answers 403 api_disabled on every /apps request until Apps are enabled, then 200", async () => {
    await setGates({ disable: ["apps"] })
    expectError(await server.request("GET", "/apps"), 403, "api_disabled")
    expectError(await server.request("GET", "/apps?include=drafts"), 403, "api_disabled")
    await setGates({ enable: ["apps"] })
    expect((await server.request("GET", "/apps")).status).toBe(200)
  })

  it("does not touch other families", async () => {
    await setGates({ disable: ["apps"] })
    expect((await server.request("GET", "/knowledgebases")).status).toBe(200)
    expect((await server.request("GET", "/agents")).status).toBe(200)
    await setGates({ enable: ["apps"] })
  })
})

describe("the published listing", () => {
  it("lists published Apps with their pinned version's contract, oldest first", async () => {
    const response = await server.request("GET", "/apps")
    expect(response.status).toBe(200)
    expect(response.body).toEqual({
      apps: [
        {
          id: published,
          name: "Chat",
          description: "published",
          services: { conversation: true, transaction: false },
          inputSchema: null,
          outputSchema: null
        },
        {
          id: contract,
          name: "Quote desk",
          description: "published",
          services: { conversation: true, transaction: true },
          inputSchema: { type: "object", properties: { sku: { type: "string" } } },
          outputSchema: { type: "object", properties: { price: { type: "number" } } }
        }
      ],
      nextCursor: null
    })
  })

  it("needs apps:read", async () => {
    const key = await server.createKey({ name: "agents only", scopes: ["agents:read"] })
    expectError(await server.request("GET", "/apps", { key }), 403, "insufficient_scope")
  })

  it("takes the published fields and refuses draft-only or unknown ones", async () => {
    const response = await server.request("GET", "/apps?fields=id,services")
    expect(response.body.apps).toEqual([
      { id: published, services: { conversation: true, transaction: false } },
      { id: contract, services: { conversation: true, transaction: true } }
    ])
    expect(expectError(await server.request("GET", "/apps?fields=id,published"), 400, "invalid_request")).toMatch(/published/)
  })

  it("filters by updatedSince, inclusive, on the publication time", async () => {
    const response = await server.request("GET", "/apps?updatedSince=2026-11-05T00:00:00.000Z")
    expect(response.body.apps.map((app: { id: string }) => app.id)).toEqual([contract])
    const offset = await server.request("GET", `/apps?updatedSince=${encodeURIComponent("2026-11-05T01:00:00+01:00")}`)
    expect(offset.body.apps.map((app: { id: string }) => app.id)).toEqual([contract])
    expect(expectError(await server.request("GET", "/apps?updatedSince=yesterday"), 400, "invalid_request")).toMatch(
      /updatedSince/
    )
  })

  it("pages with cursors bound to the listing", async () => {
    const first = await server.request("GET", "/apps?limit=1")
    expect(first.body.apps.map((app: { id: string }) => app.id)).toEqual([published])
    const second = await server.request("GET", `/apps?limit=1&cursor=${first.body.nextCursor}`)
    expect(second.body).toMatchObject({ apps: [{ id: contract }], nextCursor: null })
    expectError(await server.request("GET", `/apps?include=drafts&cursor=${first.body.nextCursor}`), 400, "invalid_request")
  })
})

describe("include=drafts", () => {
  it("lists every App with its published flag and draft fields", async () => {
    const response = await server.request("GET", "/apps?include=drafts")
    expect(response.body).toEqual({
      apps: [
        { id: draftOnly, name: "Draft (draft name)", description: "draft", published: false, updatedAt: "2026-11-01T00:00:00.000Z" },
        { id: published, name: "Chat (draft name)", description: "draft", published: true, updatedAt: "2026-11-02T00:00:00.000Z" },
        { id: contract, name: "Quote desk (draft name)", description: "draft", published: true, updatedAt: "2026-11-04T00:00:00.000Z" }
      ],
      nextCursor: null
    })
    const narrowed = await server.request("GET", "/apps?include=drafts&fields=id,published")
    expect(narrowed.body.apps).toEqual([
      { id: draftOnly, published: false },
      { id: published, published: true },
      { id: contract, published: true }
    ])
    expectError(await server.request("GET", "/apps?include=drafts&fields=services"), 400, "invalid_request")
  })

  it("needs apps:write besides apps:read", async () => {
    const reader = await server.createKey({ name: "apps reader", scopes: ["apps:read"] })
    expect(expectError(await server.request("GET", "/apps?include=drafts", { key: reader }), 403, "insufficient_scope")).toMatch(
      /apps:write/
    )
    const writer = await server.createKey({ name: "apps writer", scopes: ["apps:read", "apps:write"] })
    expect((await server.request("GET", "/apps?include=drafts", { key: writer })).status).toBe(200)
  })

  it("refuses other include values", async () => {
    expectError(await server.request("GET", "/apps?include=everything"), 400, "invalid_request")
  })
})
