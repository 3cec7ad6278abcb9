/**
 * The provisioning family over `svc mcp` in-process on the data directory (the real process over
 * stdio): the services it builds include provisioning's (the provisioning batcher, the outbox), so
 * an admin provisions, groups and invites exactly as over HTTP, and REST sees the result.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../cli/helpers.js"
import { sql } from "../support/fixtures.js"
import { startTestServer, testDatabaseEnv, type TestServer } from "../support/server.js"
import { createPlan, setGroupsGate } from "./support.js"
import { call, personalKey, toolNames } from "../support/mcp.js"

let server: TestServer

const baseEnv = () => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith("SVC_")) env[name] = value
  return { ...env, CI: "true", NO_COLOR: "1", ...testDatabaseEnv(server.dataDir) }
}

beforeAll(async () => {
  server = await startTestServer()
  await setGroupsGate(server, true)
  await createPlan(server, "Gold")
})
afterAll(() => server.stop())

describe("svc mcp in-process: provisioning", () => {
  it("provisions an end user by plan name and invites a member by email, as REST then reads them", async () => {
    const key = await personalKey(server, "boss@example.com", "admin")
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(repoRoot, "bin", "svc.js"), "mcp", "--data-dir", server.dataDir, "--tools", "provisioning"],
      env: { ...baseEnv(), SVC_API_KEY: key },
      stderr: "pipe",
      cwd: repoRoot
    })
    const client = new Client({ name: "stdio-provisioning", version: "1.0.0" })
    await client.connect(transport)
    try {
      expect(await toolNames(client)).toContain("provision_end_user")
      const made = await call(client, "provision_end_user", { email: "eve@example.com", tierPlanIds: ["Gold"] })
      expect(made.body).toEqual(expect.objectContaining({ created: true, subscriptions: [expect.objectContaining({ tierPlanName: "Gold" })] }))
      const group = await call(client, "create_user_group", { name: "Insiders" })
      expect(group.isError).toBe(false)
      const added = await call(client, "add_group_member", { groupId: "Insiders", email: "fay@example.com" })
      expect(added.body).toEqual({ ok: true, added: true, endUserId: expect.any(String) })
    } finally {
      await client.close()
    }
    const rest = await server.request("GET", "/end-users?email=eve@example.com")
    expect(rest.body.endUsers).toEqual([expect.objectContaining({ email: "eve@example.com", state: "active" })])
    expect(await sql(server, (db) => db`SELECT kind FROM outbox_emails WHERE recipient = ${"fay@example.com"}`)).toEqual([{ kind: "group_invite" }])
  })
})
