/**
 * The provisioning family's user-group and admission tools through the MCP SDK's client over
 * Streamable HTTP: groups (by name), members by email or id, grants, Portal admissions, and the
 * main refusals with REST's codes (`plan_group`, `deleted_identity`, `group_not_found`,
 * `portal_scope_unsupported`, `not_found` for another organization's ids), each proven to write
 * nothing.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sql, unknownId } from "../support/fixtures.js"
import type { TestServer } from "../support/server.js"
import { createTargets } from "./support.js"
import { call } from "../support/mcp.js"
import { provisioningSetup, type ProvisioningSetup } from "./mcp-setup.js"

let server: TestServer
let otherKey: string
let admin: Client
let gold: ProvisioningSetup["gold"]
let portal: string
let ok: ProvisioningSetup["ok"]
let refusedWithoutWrites: ProvisioningSetup["refusedWithoutWrites"]
let stop: ProvisioningSetup["stop"]

beforeAll(async () => {
  ;({ server, otherKey, admin, gold, portal, ok, refusedWithoutWrites, stop } = await provisioningSetup())
  const deleted = await ok("provision_end_user", { email: "bo@example.com" })
  await ok("delete_end_user", { endUserId: deleted.endUser.id, confirm: true })
})
afterAll(() => stop())

describe("user groups", () => {
  it("creates, lists with fields, reads by name, updates and deletes (with confirm) a group", async () => {
    const made = (await ok("create_user_group", { name: "Staff", description: "Everyone" })).group
    expect(made).toEqual(expect.objectContaining({ name: "Staff", description: "Everyone", memberCount: 0, planId: null }))
    const listed = await ok("list_user_groups", { fields: ["name", "planId"], limit: 200 })
    expect(listed.items).toEqual(expect.arrayContaining([{ name: "Staff", planId: null }, { name: "Gold", planId: gold.planId }]))
    expect(await ok("update_user_group", { groupId: "Staff", name: "Crew", description: null })).toEqual({ ok: true })
    expect((await ok("get_user_group", { groupId: made.id })).group).toEqual(expect.objectContaining({ name: "Crew", description: null }))
    await refusedWithoutWrites("update_user_group", { groupId: "Crew" }, "invalid_request")
    await refusedWithoutWrites("update_user_group", { groupId: "Gold", name: "Renamed" }, "plan_group")
    await refusedWithoutWrites("delete_user_group", { groupId: gold.groupId, confirm: true }, "plan_group")
    expect(await refusedWithoutWrites("get_user_group", { groupId: "Crw" }, "not_found")).toContain("Crew")

    expect(await call(admin, "delete_user_group", { groupId: "Crew", confirm: false })).toEqual({ isError: true, body: expect.stringContaining("confirm") })
    expect((await ok("get_user_group", { groupId: "Crew" })).group.id).toBe(made.id)
    expect(await ok("delete_user_group", { groupId: "Crew", confirm: true })).toEqual({ ok: true })
    await refusedWithoutWrites("get_user_group", { groupId: made.id }, "not_found")
  })

  it("adds members by email (pending, invited) and by id, refuses a plan's group and a deleted account, removes by email", async () => {
    const group = (await ok("create_user_group", { name: "Readers" })).group
    const byEmail = await ok("add_group_member", { groupId: "Readers", email: "cy@example.com" })
    expect(byEmail).toEqual({ ok: true, added: true, endUserId: expect.any(String) })
    expect((await ok("get_end_user", { endUserId: "cy@example.com" })).endUser.state).toBe("pending")
    expect(await sql(server, (db) => db`SELECT kind FROM outbox_emails WHERE recipient = ${"cy@example.com"}`)).toEqual([{ kind: "group_invite" }])
    expect(await ok("add_group_member", { groupId: group.id, endUserId: byEmail.endUserId })).toEqual({ ok: true, added: false, endUserId: byEmail.endUserId })
    await refusedWithoutWrites("add_group_member", { groupId: "Gold", email: "dee@example.com" }, "plan_group")
    await refusedWithoutWrites("add_group_member", { groupId: "Readers", email: "dee@example.com", endUserId: byEmail.endUserId }, "invalid_request")
    await refusedWithoutWrites("add_group_member", { groupId: "Readers", email: "bo@example.com" }, "deleted_identity")
    await refusedWithoutWrites("add_group_member", { groupId: "Readers", endUserId: unknownId() }, "not_found")
    expect((await ok("get_user_group", { groupId: "Readers" })).members).toEqual([expect.objectContaining({ email: "cy@example.com", via: "direct" })])
    expect(await ok("remove_group_member", { groupId: "Readers", endUserId: "cy@example.com" })).toEqual({ ok: true, removed: true })
    expect(await ok("remove_group_member", { groupId: "Readers", endUserId: byEmail.endUserId })).toEqual({ ok: true, removed: false })
  })

  it("grants and revokes access, refusing deploymentId and unknown targets", async () => {
    const { appId } = await createTargets(server)
    const granted = await ok("grant_group_access", { groupId: "Readers", targetKind: "app", targetId: appId })
    expect(granted).toEqual({ ok: true, grantId: expect.any(String), created: true })
    expect(await ok("grant_group_access", { groupId: "Readers", targetKind: "app", targetId: appId })).toEqual({ ...granted, created: false })
    await refusedWithoutWrites("grant_group_access", { groupId: "Readers", targetKind: "app", targetId: appId, deploymentId: "d1" }, "portal_scope_unsupported")
    await refusedWithoutWrites("grant_group_access", { groupId: "Readers", targetKind: "suite", targetId: unknownId() }, "grant_target_not_found")
    await refusedWithoutWrites("grant_group_access", { groupId: unknownId(), targetKind: "app", targetId: appId }, "not_found")
    expect((await ok("get_user_group", { groupId: "Readers" })).grants).toEqual([expect.objectContaining({ grantId: granted.grantId, targetId: appId })])
    expect(await ok("revoke_group_grant", { groupId: "Readers", grantId: granted.grantId })).toEqual({ ok: true })
    await refusedWithoutWrites("revoke_group_grant", { groupId: "Readers", grantId: granted.grantId }, "not_found")
  })

  it("answers not_found for another organization's group", async () => {
    const theirs = await server.request("POST", "/user-groups", { key: otherKey, body: { name: "Theirs" } })
    const theirId = theirs.body.group.id
    await refusedWithoutWrites("get_user_group", { groupId: theirId }, "not_found")
    await refusedWithoutWrites("delete_user_group", { groupId: theirId, confirm: true }, "not_found")
    await refusedWithoutWrites("add_group_member", { groupId: theirId, email: "x@example.com" }, "not_found")
    await refusedWithoutWrites("provision_end_user", { email: "x@example.com", groupIds: [theirId] }, "group_not_found")
  })
})

describe("Portal admissions", () => {
  it("admits by names, lists, removes, and refuses unknown or foreign groups and Portals", async () => {
    const admitted = await ok("admit_group", { portalId: "Members", groupId: "Readers" })
    expect(admitted).toEqual({ ok: true, created: true, admission: expect.objectContaining({ groupName: "Readers", planId: null }) })
    server.clock.advance(1_000)
    expect((await ok("admit_group", { portalId: portal, groupId: "Gold" })).admission.planId).toBe(gold.planId)
    expect((await ok("admit_group", { portalId: portal, groupId: "Readers" })).created).toBe(false)
    const first = await ok("list_portal_admissions", { portalId: "Members", limit: 1 })
    expect(first.items.map((a: any) => a.groupName)).toEqual(["Readers"])
    expect(await ok("list_portal_admissions", { portalId: portal, cursor: first.nextCursor, fields: ["groupName", "planId"] })).toEqual({
      items: [{ groupName: "Gold", planId: gold.planId }],
      nextCursor: null
    })

    const theirGroup = (await server.request("POST", "/user-groups", { key: otherKey, body: { name: "Foreign" } })).body.group.id
    await refusedWithoutWrites("admit_group", { portalId: portal, groupId: theirGroup }, "group_not_found")
    await refusedWithoutWrites("admit_group", { portalId: portal, groupId: "Nope" }, "group_not_found")
    await refusedWithoutWrites("admit_group", { portalId: unknownId(), groupId: "Readers" }, "not_found")
    await refusedWithoutWrites("list_portal_admissions", { portalId: "Elsewhere" }, "not_found")

    expect(await ok("remove_admission", { portalId: "Members", groupId: "Readers" })).toEqual({ ok: true, removed: true })
    expect(await ok("remove_admission", { portalId: portal, groupId: "Readers" })).toEqual({ ok: true, removed: false })
  })
})
