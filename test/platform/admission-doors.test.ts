/**
 * One admission for every door (`server/identity/admission.ts`): authenticate, authorize (plan, gate,
 * scopes), then count the request against the key's rate. Through each door (the router, on a
 * server without the fast lane; the fast lane; MCP over HTTP) a refused request (403) is never
 * counted and an admitted one is counted once: after any number of refusals the key still has its
 * whole budget, then 429.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import type { FastLaneOutcome } from "../../server/http/fast-lane.js"
import { call, connect, personalKey } from "../support/mcp.js"
import { organizationWithPersonalKey } from "../support/fixtures.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"

const budget = 5
const lane: Array<{ outcome: FastLaneOutcome; path: string }> = []
let server: TestServer
let routerOnly: TestServer
beforeAll(async () => {
  ;[server, routerOnly] = await Promise.all([
    startTestServer({
      clock: new ManualClock(),
      server: { requestsPerMinute: budget, fastLane: { observe: (outcome, _method, path) => void lane.push({ outcome, path }) } }
    }),
    startTestServer({ clock: new ManualClock(), server: { requestsPerMinute: budget, fastLane: { enabled: false } } })
  ])
})
afterAll(() => Promise.all([server.stop(), routerOnly.stop()]))

/** A new minute: every key's window is empty again. */
const nextWindow = () => {
  server.clock.advance(61_000)
  routerOnly.clock.advance(61_000)
}

describe("a refused request is not counted, whichever door", () => {
  it("the router: 403 insufficient_scope ten times, then the whole budget, then 429", async () => {
    nextWindow()
    const key = await routerOnly.createKey({ name: "router door", scopes: ["agents:read"] })
    for (let i = 0; i < 10; i++) {
      const refused = await routerOnly.request("GET", "/end-users", { key })
      expect([refused.status, refused.body.error.code]).toEqual([403, "insufficient_scope"])
    }
    for (let i = 0; i < budget; i++) expect((await routerOnly.request("GET", "/agents", { key })).status).toBe(200)
    expect((await routerOnly.request("GET", "/agents", { key })).status).toBe(429)
  })

  it("the router: a plan without the External API is refused, never limited", async () => {
    nextWindow()
    const key = await organizationWithPersonalKey(routerOnly, "doors-trial", "trial")
    for (let i = 0; i < budget * 3; i++) {
      const refused = await routerOnly.request("GET", "/agents", { key })
      expect([refused.status, refused.body.error.code]).toEqual([403, "api_disabled"])
    }
  })

  it("the fast lane: the refused writes it answers are not counted; the reads it serves are, once each", async () => {
    nextWindow()
    const key = await server.createKey({ name: "lane door", scopes: ["knowledge:read"] })
    lane.length = 0
    for (let i = 0; i < 10; i++) {
      const refused = await server.request("POST", "/knowledgebases", { key, body: { name: `Refused ${i}` } })
      expect([refused.status, refused.body.error.code]).toEqual([403, "insufficient_scope"])
    }
    expect(lane.filter((seen) => seen.path === "/api/v1/knowledgebases")).toHaveLength(10)
    for (let i = 0; i < budget; i++) expect((await server.request("GET", "/knowledgebases", { key })).status).toBe(200)
    expect(lane.filter((seen) => seen.outcome === "served")).toHaveLength(10 + budget)
    const over = await server.request("GET", "/knowledgebases", { key })
    expect([over.status, over.body.error.code]).toEqual([429, "rate_limited"])
  })

  it("MCP: a tool refused by its gate is not counted; allowed calls are, once each", async () => {
    nextWindow()
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { enable: ["mcp"], disable: ["groups"] })))
    const key = await personalKey(server, "doors@example.com", "admin")
    const client = await connect(server, key)
    try {
      for (let i = 0; i < 10; i++) {
        const refused = await call(client, "list_user_groups")
        expect([refused.isError, refused.body.error.code]).toEqual([true, "groups_disabled"])
      }
      for (let i = 0; i < budget; i++) expect((await call(client, "list_knowledgebases")).isError).toBe(false)
      const over = await call(client, "list_knowledgebases")
      expect(over.body.error.code).toBe("rate_limited")
    } finally {
      await client.close()
    }
  })
})
