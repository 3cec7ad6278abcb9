/**
 * The provisioning tools take REST's bounds (issue 22), and REST's JSON Schema shows the bounds its
 * decode applies: an email is 5 (`a@b.c`) to 254 characters, a bonus adjustment ±1,000,000,000. At
 * each bound MCP and REST accept; one past it, MCP refuses the argument before the tool runs and
 * REST answers `invalid_request` naming the field, and nothing is written. Ids REST leaves unbounded
 * (`endUserId` and `targetId` in a body, a grant's id, the `email` filter) MCP takes as they are,
 * answered as REST answers them.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, sql } from "../support/fixtures.js"
import { call } from "../support/mcp.js"
import { expectArgumentRefused } from "../support/mcp-arguments.js"
import type { TestServer } from "../support/server.js"
import { provisioningSetup, type ProvisioningSetup } from "./mcp-setup.js"
import { provisioningCounts } from "./support.js"

let server: TestServer
let admin: Client
let silver: ProvisioningSetup["silver"]
let ok: ProvisioningSetup["ok"]
let stop: ProvisioningSetup["stop"]

beforeAll(async () => {
  ;({ server, admin, silver, ok, stop } = await provisioningSetup())
})
afterAll(() => stop())

/** An address of exactly `length` characters. */
const addressOf = (length: number): string => `${"a".repeat(length - "@b.co".length)}@b.co`

const adjustments = async () => Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM bonus_credit_adjustments`))[0]?.n ?? 0)

describe("an email", () => {
  it("is taken at 5 and at 254 characters and refused at 4 and 255 over both doors, writing nothing", async () => {
    expect(await ok("provision_end_user", { email: "a@b.c" })).toMatchObject({ created: true, endUser: { email: "a@b.c" } })
    expect(await ok("provision_end_user", { email: addressOf(254) })).toMatchObject({ created: true })
    expect((await server.request("POST", "/end-users", { body: { email: "c@d.e" } })).status).toBe(201)

    const before = await provisioningCounts(server)
    expectArgumentRefused(await call(admin, "provision_end_user", { email: "a@bc" }), "provision_end_user", "email", ">=5 characters")
    expectArgumentRefused(await call(admin, "provision_end_user", { email: addressOf(255) }), "provision_end_user", "email", "<=254 characters")
    expectArgumentRefused(await call(admin, "add_group_member", { groupId: "Gold", email: "a@bc" }), "add_group_member", "email", ">=5 characters")
    for (const email of ["a@bc", addressOf(255)]) {
      expect(expectError(await server.request("POST", "/end-users", { body: { email } }), 400, "invalid_request")).toContain("email")
    }
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("as the list's filter is REST's unbounded query parameter: an empty one matches no account, over MCP as over REST", async () => {
    expect((await ok("list_end_users", { limit: 200 })).items.length).toBeGreaterThan(0)
    const overMcp = await ok("list_end_users", { email: "", limit: 200 })
    const overRest = await server.request("GET", "/end-users?email=&limit=200")
    expect(overRest.status).toBe(200)
    expect(overRest.body).toEqual({ endUsers: [], nextCursor: null })
    expect(overMcp).toEqual({ items: overRest.body.endUsers, nextCursor: overRest.body.nextCursor })
  })
})

describe("a bonus adjustment", () => {
  it("is taken at ±1,000,000,000 and refused one past it over both doors, writing nothing", async () => {
    const created = await ok("provision_end_user", { email: "bonus@example.com", tierPlanIds: [silver.planId] })
    const subscriptionId = created.subscriptions[0].id as string
    const endUserId = created.endUser.id as string
    const path = `/end-users/${endUserId}/subscriptions/${subscriptionId}/bonus-credits`
    expect(await ok("adjust_bonus_credits", { endUserId, subscriptionId, amount: 1_000_000_000 })).toMatchObject({ applied: 1_000_000_000 })
    expect((await server.request("POST", path, { body: { amount: -1_000_000_000 } })).body).toMatchObject({ applied: -1_000_000_000 })

    const before = { counts: await provisioningCounts(server), adjustments: await adjustments() }
    expectArgumentRefused(await call(admin, "adjust_bonus_credits", { endUserId, subscriptionId, amount: 1_000_000_001 }), "adjust_bonus_credits", "amount", "<=1000000000")
    expectArgumentRefused(await call(admin, "adjust_bonus_credits", { endUserId, subscriptionId, amount: -1_000_000_001 }), "adjust_bonus_credits", "amount", ">=-1000000000")
    for (const amount of [1_000_000_001, -1_000_000_001]) {
      expect(expectError(await server.request("POST", path, { body: { amount } }), 400, "invalid_request")).toContain("amount")
    }
    expect({ counts: await provisioningCounts(server), adjustments: await adjustments() }).toEqual(before)
  })

  it("shows REST's range in the OpenAPI document, and the email's lengths", async () => {
    const document = await server.request("GET", "/openapi.json", { key: null })
    expect(document.status).toBe(200)
    const schemas = document.body.components.schemas
    expect(schemas.BonusCredits.properties.amount).toMatchObject({ type: "integer", minimum: -1_000_000_000, maximum: 1_000_000_000, not: { const: 0 } })
    expect(schemas.AddUserGroupMember.properties.email).toMatchObject({ type: "string", format: "email", minLength: 5, maxLength: 254 })
  })
})

describe("ids REST leaves unbounded", () => {
  it("an empty endUserId or targetId is refused by REST's decode, over MCP as over REST, writing nothing", async () => {
    const before = await provisioningCounts(server)
    const member = await call(admin, "add_group_member", { groupId: "Gold", endUserId: "" })
    expect(member).toEqual({ isError: true, body: { error: { code: "invalid_request", message: expect.stringContaining("endUserId") } } })
    const grant = await call(admin, "grant_group_access", { groupId: "Gold", targetKind: "suite", targetId: "" })
    expect(grant).toEqual({ isError: true, body: { error: { code: "invalid_request", message: expect.stringContaining("targetId") } } })
    const groupId = (await ok("get_user_group", { groupId: "Gold" })).group.id as string
    expect(expectError(await server.request("POST", `/user-groups/${groupId}/members`, { body: { endUserId: "" } }), 400, "invalid_request")).toContain("endUserId")
    expect(expectError(await server.request("POST", `/user-groups/${groupId}/grants`, { body: { targetKind: "suite", targetId: "" } }), 400, "invalid_request")).toContain("targetId")
    expect(await provisioningCounts(server)).toEqual(before)
  })

  it("an empty grant id names no grant: not_found, as REST answers a grant id it does not know", async () => {
    const before = await provisioningCounts(server)
    expect(await call(admin, "revoke_group_grant", { groupId: "Gold", grantId: "" })).toEqual({ isError: true, body: { error: { code: "not_found", message: expect.any(String) } } })
    const groupId = (await ok("get_user_group", { groupId: "Gold" })).group.id as string
    expectError(await server.request("DELETE", `/user-groups/${groupId}/grants/no-such-grant`), 404, "not_found")
    expect(await provisioningCounts(server)).toEqual(before)
  })
})
