/**
 * The provisioning family through the MCP SDK's client over Streamable HTTP: listed for admins only
 * (and a role change between two requests), group and admission tools only with the `groups` gate
 * (called without it, `groups_disabled`), input schemas, plans, Portals and end users over the same
 * services as REST, names and emails for ids, and the main refusals with REST's codes, each proven
 * to write nothing. Groups and admissions: `provisioning-groups.test.ts`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { sql, unknownId } from "../support/fixtures.js"
import type { TestServer } from "../support/server.js"
import { setGroupsGate } from "./support.js"
import { call, connect, personalKey, toolNames } from "../support/mcp.js"
import { provisioningSetup, type ProvisioningSetup } from "./mcp-setup.js"

const ungatedTools = [
  "adjust_bonus_credits",
  "delete_end_user",
  "get_end_user",
  "list_end_users",
  "list_portals",
  "list_tier_plans",
  "provision_end_user",
  "remove_end_user_plan",
  "revoke_end_user"
]
const gatedTools = [
  "add_group_member",
  "admit_group",
  "create_user_group",
  "delete_user_group",
  "get_user_group",
  "grant_group_access",
  "list_portal_admissions",
  "list_user_groups",
  "remove_admission",
  "remove_group_member",
  "revoke_group_grant",
  "update_user_group"
]
const core = ["search_docs", "whoami"]

let server: TestServer
let otherKey: string
let admin: Client
let gold: ProvisioningSetup["gold"]
let silver: ProvisioningSetup["silver"]
let portal: string
let ok: ProvisioningSetup["ok"]
let refusedWithoutWrites: ProvisioningSetup["refusedWithoutWrites"]
let stop: ProvisioningSetup["stop"]

const codeOf = (answer: { isError: boolean; body: any }) => (answer.isError ? answer.body?.error?.code : null)

beforeAll(async () => {
  ;({ server, otherKey, admin, gold, silver, portal, ok, refusedWithoutWrites, stop } = await provisioningSetup())
})
afterAll(() => stop())

describe("tool lists", () => {
  it("offers an admin the whole family, and members and viewers none of it", async () => {
    expect(await toolNames(admin)).toEqual([...ungatedTools, ...gatedTools, ...core].sort())
    for (const role of ["member", "viewer"] as const) {
      const client = await connect(server, await personalKey(server, `${role}@example.com`, role), { tools: "provisioning" })
      expect(await toolNames(client)).toEqual(core)
      await client.close()
    }
  })

  it("leaves the group and admission tools out while the groups gate is off; called, they answer groups_disabled as REST does", async () => {
    await setGroupsGate(server, false)
    try {
      expect(await toolNames(admin)).toEqual([...ungatedTools, ...core].sort())
      const rest = await server.request("POST", "/user-groups", { body: { name: "Hidden" } })
      expect(rest.body.error.code).toBe("groups_disabled")
      const message = await refusedWithoutWrites("create_user_group", { name: "Hidden" }, "groups_disabled")
      expect(message).toBe(rest.body.error.message)
      await refusedWithoutWrites("admit_group", { portalId: portal, groupId: gold.groupId }, "groups_disabled")
      const member = await connect(server, await personalKey(server, "gated-member@example.com", "member"), { tools: "provisioning" })
      await expect(call(member, "create_user_group", { name: "Hidden" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Unknown tool: create_user_group.") })
      await member.close()
    } finally {
      await setGroupsGate(server, true)
    }
    expect(await toolNames(admin)).toContain("create_user_group")
  })

  it("declares precise input schemas: required arguments, enums, and confirm as the constant true", async () => {
    const tools = new Map((await admin.listTools()).tools.map((tool) => [tool.name, tool.inputSchema as any]))
    expect(tools.get("provision_end_user").required).toEqual(["email"])
    expect(tools.get("delete_end_user").required).toEqual(["endUserId", "confirm"])
    expect(tools.get("delete_end_user").properties.confirm).toEqual(expect.objectContaining({ const: true }))
    expect(tools.get("delete_user_group").required).toEqual(["groupId", "confirm"])
    expect(tools.get("grant_group_access").properties.targetKind.enum).toEqual(["app", "suite"])
    expect(tools.get("list_end_users").properties.limit).toEqual(expect.objectContaining({ type: "integer", minimum: 1, maximum: 200 }))
  })

  it("removes the family on the next request after a role change, and brings it back", async () => {
    const client = await connect(server, await personalKey(server, "changing@example.com", "admin"), { tools: "provisioning" })
    expect((await call(client, "list_tier_plans")).isError).toBe(false)
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setMemberRole("default", "changing@example.com", "member")))
    expect(await toolNames(client)).toEqual(core)
    await expect(call(client, "list_tier_plans")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Unknown tool: list_tier_plans.") })
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setMemberRole("default", "changing@example.com", "admin")))
    expect(await toolNames(client)).toContain("provision_end_user")
    await client.close()
  })
})

describe("plans and Portals", () => {
  it("lists plans and Portals as {items, nextCursor} with limit and cursor", async () => {
    const first = await ok("list_tier_plans", { limit: 1 })
    expect(first.items).toEqual([expect.objectContaining({ id: gold.planId, name: "Gold", groupId: gold.groupId, creditAllowance: 500, archived: false })])
    const second = await ok("list_tier_plans", { limit: 1, cursor: first.nextCursor })
    expect(second).toEqual({ items: [expect.objectContaining({ id: silver.planId })], nextCursor: null })
    expect(await ok("list_portals")).toEqual({ items: [expect.objectContaining({ id: portal, name: "Members" })], nextCursor: null })
    expect(codeOf(await call(admin, "list_portals", { cursor: "forged" }))).toBe("invalid_request")
    expect((await ok("list_tier_plans", { fields: ["name", "archived"] })).items).toEqual([
      { name: "Gold", archived: false },
      { name: "Silver", archived: false }
    ])
    expect((await ok("list_portals", { fields: ["name"] })).items).toEqual([{ name: "Members" }])
    const unknownField = await call(admin, "list_portals", { fields: ["secret"] })
    expect(unknownField.isError).toBe(true)
  })
})

describe("end users", () => {
  it("provisions by plan and group names, then reads, lists and finds the account by email", async () => {
    const group = (await ok("create_user_group", { name: "Beta" })).group
    const made = await ok("provision_end_user", { email: "Ada@Example.com", fullName: "Ada", tierPlanIds: ["Gold"], groupIds: ["Beta"] })
    expect(made).toEqual(
      expect.objectContaining({ created: true, groupsJoined: [group.id], grantsCreated: 0, endUser: expect.objectContaining({ email: "Ada@Example.com", fullName: "Ada" }) })
    )
    expect(made.subscriptions).toEqual([expect.objectContaining({ tierPlanId: gold.planId, tierPlanName: "Gold", creditAllowance: 500 })])
    const again = await ok("provision_end_user", { email: "ada@example.com", tierPlanIds: [silver.planId] })
    expect(again.created).toBe(false)
    expect(again.subscriptions.map((s: any) => s.tierPlanName)).toEqual(["Gold", "Silver"])
    const read = await ok("get_end_user", { endUserId: "ADA@example.com" })
    expect(read.endUser).toEqual(expect.objectContaining({ id: made.endUser.id, state: "active", groupIds: [group.id] }))
    expect((await ok("get_end_user", { endUserId: made.endUser.id })).endUser.id).toBe(made.endUser.id)
    expect((await ok("get_end_user", { end_user_id: "ada@example.com" })).endUser.id).toBe(made.endUser.id)
    const listed = await ok("list_end_users", { email: "ada@EXAMPLE.com" })
    expect(listed).toEqual({ items: [expect.objectContaining({ id: made.endUser.id, state: "active" })], nextCursor: null })
    expect((await ok("list_end_users", { email: "ada@example.com", fields: ["email", "state"] })).items).toEqual([{ email: "Ada@Example.com", state: "active" }])
    expect((await ok("list_end_users", { updatedSince: "2999-01-01T00:00:00Z" })).items).toEqual([])
    expect(codeOf(await call(admin, "list_end_users", { updatedSince: "yesterday" }))).toBe("invalid_request")
  })

  it("refuses unknown plans, plans' groups and bad emails with REST's codes, writing nothing", async () => {
    expect(await refusedWithoutWrites("provision_end_user", { email: "new@example.com", tierPlanIds: ["Platinum"] }, "tier_not_found")).toContain("Platinum")
    await refusedWithoutWrites("provision_end_user", { email: "new@example.com", tierPlanIds: [unknownId()] }, "tier_not_found")
    await refusedWithoutWrites("provision_end_user", { email: "new@example.com", groupIds: ["Nobody"] }, "group_not_found")
    await refusedWithoutWrites("provision_end_user", { email: "new@example.com", groupIds: [gold.groupId] }, "plan_group")
    await refusedWithoutWrites("provision_end_user", { email: "not an email" }, "invalid_request")
    expect((await call(admin, "list_end_users", { email: "new@example.com" })).body.items).toEqual([])
  })

  it("revokes, removes a plan by name, adjusts bonus credits, and deletes only with confirm", async () => {
    const made = await ok("provision_end_user", { email: "bo@example.com", tierPlanIds: ["Gold", "Silver"] })
    const id = made.endUser.id
    expect(await ok("revoke_end_user", { endUserId: "bo@example.com" })).toEqual({ ok: true, revoked: true })
    expect((await ok("get_end_user", { endUserId: id })).endUser.state).toBe("revoked")
    expect(await ok("remove_end_user_plan", { endUserId: id, subscriptionId: "Silver" })).toEqual({ ok: true })
    expect((await ok("get_end_user", { endUserId: id })).endUser.subscriptions.map((s: any) => s.tierPlanName)).toEqual(["Gold"])
    const added = await ok("adjust_bonus_credits", { endUserId: id, subscriptionId: gold.planId, amount: 25, reason: "goodwill" })
    expect(added).toEqual({ ok: true, applied: 25, subscription: expect.objectContaining({ bonusCredits: 25, creditsRemaining: 525 }) })
    const removed = await ok("adjust_bonus_credits", { endUserId: id, subscriptionId: added.subscription.id, amount: -100 })
    expect(removed.applied).toBe(-25)
    await refusedWithoutWrites("adjust_bonus_credits", { endUserId: id, subscriptionId: "Gold", amount: 0 }, "invalid_request")
    await refusedWithoutWrites("remove_end_user_plan", { endUserId: id, subscriptionId: "Silver" }, "not_found")

    const unconfirmed = await call(admin, "delete_end_user", { endUserId: id })
    expect(unconfirmed).toEqual({ isError: true, body: expect.stringContaining("confirm") })
    expect((await ok("get_end_user", { endUserId: id })).endUser.subscriptions).toHaveLength(1)
    expect(await ok("delete_end_user", { endUserId: id, confirm: true })).toEqual({ ok: true })
    expect(await sql(server, (db) => db`SELECT state, full_name FROM end_users WHERE id = ${id}`)).toEqual([{ state: "deleted", full_name: null }])
    await refusedWithoutWrites("get_end_user", { endUserId: id }, "not_found")
    await refusedWithoutWrites("provision_end_user", { email: "BO@example.com", tierPlanIds: ["Gold"] }, "deleted_identity")
  })

  it("answers not_found for another organization's end user and for an unknown email", async () => {
    const theirs = await server.request("POST", "/end-users", { key: otherKey, body: { email: "theirs@example.com" } })
    expect(theirs.status).toBe(201)
    const theirId = theirs.body.endUser.id
    await refusedWithoutWrites("get_end_user", { endUserId: theirId }, "not_found")
    await refusedWithoutWrites("revoke_end_user", { endUserId: theirId }, "not_found")
    await refusedWithoutWrites("delete_end_user", { endUserId: theirId, confirm: true }, "not_found")
    await refusedWithoutWrites("get_end_user", { endUserId: "theirs@example.com" }, "not_found")
    expect(await sql(server, (db) => db`SELECT state FROM end_users WHERE id = ${theirId}`)).toEqual([{ state: "active" }])
  })
})
