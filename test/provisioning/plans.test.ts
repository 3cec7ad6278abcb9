/**
 * Tier plans and Portals: `svc plans create|archive` and `svc portals create` on the data directory
 * of a running server, and `GET /tier-plans` and `GET /portals` (scope, paging, isolation).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { expectFailure, svc, svcJson } from "../cli/helpers.js"

let server: TestServer
let otherKey: string

beforeAll(async () => {
  server = await startTestServer()
  otherKey = await server.createOrganization("other")
})
afterAll(() => server.stop())

const cli = (args: ReadonlyArray<string>) => svcJson(args, server.dataDir)

describe("svc plans", () => {
  it("creates a plan with its plan group in one go (the group is named after the plan and points back at it)", async () => {
    const created = await cli(["plans", "create", "--org", "default", "--name", "  Gold  ", "--credits", "500", "--json"])
    expect(created).toEqual({ tierPlan: { id: expect.any(String), name: "Gold", creditAllowance: 500, groupId: expect.any(String) } })
    const groups = await sql(server, (db) => db<{ name: string; plan_id: string }>`SELECT name, plan_id FROM user_groups WHERE id = ${created.tierPlan.groupId}`)
    expect(groups).toEqual([{ name: "Gold", plan_id: created.tierPlan.id }])
  })

  it("refuses a negative allowance, an empty name and an unknown organization, writing nothing", async () => {
    const before = await sql(server, (db) => db<{ n: number }>`SELECT (SELECT count(*) FROM tier_plans) + (SELECT count(*) FROM user_groups) AS n`)
    expect(expectFailure(await svc(["plans", "create", "--org", "default", "--name", "X", "--credits", "-1"], server.dataDir), 1)).toMatch(/credit/)
    expect(expectFailure(await svc(["plans", "create", "--org", "default", "--name", "  ", "--credits", "1"], server.dataDir), 1)).toMatch(/name/)
    expectFailure(await svc(["plans", "create", "--org", "nope", "--name", "X", "--credits", "1"], server.dataDir), 1)
    expectFailure(await svc(["plans", "create", "--org", "default", "--name", "X", "--credits", "many"], server.dataDir), 2)
    const after = await sql(server, (db) => db<{ n: number }>`SELECT (SELECT count(*) FROM tier_plans) + (SELECT count(*) FROM user_groups) AS n`)
    expect(after).toEqual(before)
  })

  it("archives a plan (idempotently); the catalog still lists it, flagged; another organization's plan is not found", async () => {
    const plan = (await cli(["plans", "create", "--org", "default", "--name", "Old", "--credits", "10", "--json"])).tierPlan
    const archived = await cli(["plans", "archive", "--org", "default", plan.id, "--json"])
    expect(archived).toEqual({ tierPlan: { ...plan, archived: true } })
    expect(await cli(["plans", "archive", "--org", "default", plan.id, "--json"])).toEqual(archived)
    expect(expectFailure(await svc(["plans", "archive", "--org", "other", plan.id], server.dataDir), 1)).toMatch(/No tier plan/)
    expectFailure(await svc(["plans", "archive", "--org", "default", unknownId()], server.dataDir), 1)
    const listed = await server.request("GET", "/tier-plans?limit=200")
    expect(listed.body.tierPlans.find((p: { id: string }) => p.id === plan.id)).toEqual({ ...plan, archived: true, createdAt: expect.any(String) })
  })
})

describe("GET /tier-plans", () => {
  it("lists the organization's plans oldest first, in pages, and never another organization's", async () => {
    const org = await startTestServer()
    try {
      const names = ["A", "B", "C"]
      const made = []
      for (const name of names) {
        org.clock.advance(1_000)
        made.push((await svcJson(["plans", "create", "--org", "default", "--name", name, "--credits", "5", "--json"], org.dataDir)).tierPlan)
      }
      const first = await org.request("GET", "/tier-plans?limit=2")
      expect(first.status).toBe(200)
      expect(first.body.tierPlans.map((p: { name: string }) => p.name)).toEqual(["A", "B"])
      expect(first.body.tierPlans[0]).toEqual({ ...made[0], archived: false, createdAt: expect.any(String) })
      const second = await org.request("GET", `/tier-plans?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`)
      expect(second.body).toEqual({ tierPlans: [expect.objectContaining({ name: "C" })], nextCursor: null })
      expectError(await org.request("GET", "/tier-plans?cursor=junk"), 400, "invalid_request")
      expectError(await org.request("GET", "/tier-plans?limit=0"), 400, "invalid_request")
    } finally {
      await org.stop()
    }
    const theirs = await server.request("GET", "/tier-plans", { key: otherKey })
    expect(theirs.body).toEqual({ tierPlans: [], nextCursor: null })
  })

  it("needs end_users:read", async () => {
    const key = await server.createKey({ name: "no-end-users", scopes: ["knowledge:read"] })
    expectError(await server.request("GET", "/tier-plans", { key }), 403, "insufficient_scope")
    expectError(await server.request("GET", "/portals", { key }), 403, "insufficient_scope")
    const reader = await server.createKey({ name: "reader", scopes: ["end_users:read"] })
    expect((await server.request("GET", "/tier-plans", { key: reader })).status).toBe(200)
    expect((await server.request("GET", "/portals", { key: reader })).status).toBe(200)
  })
})

describe("Portals", () => {
  it("svc portals create makes a Portal that GET /portals lists, in pages, for its organization only", async () => {
    const made = []
    for (const name of ["Members area", "Partners"]) {
      server.clock.advance(1_000)
      made.push(await cli(["portals", "create", "--org", "default", "--name", name, "--json"]))
    }
    expect(made[0]).toEqual({ portal: { id: expect.any(String), name: "Members area" } })
    const first = await server.request("GET", "/portals?limit=1")
    expect(first.body).toEqual({ portals: [{ ...made[0].portal, createdAt: expect.any(String) }], nextCursor: expect.any(String) })
    const second = await server.request("GET", `/portals?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`)
    expect(second.body).toEqual({ portals: [{ ...made[1].portal, createdAt: expect.any(String) }], nextCursor: null })
    expect((await server.request("GET", "/portals", { key: otherKey })).body).toEqual({ portals: [], nextCursor: null })
    expectFailure(await svc(["portals", "create", "--org", "default", "--name", ""], server.dataDir), 1)
  })
})
