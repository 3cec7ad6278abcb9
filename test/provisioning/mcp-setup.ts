/**
 * Set-up of the MCP provisioning suites: a test server with the `groups` gate on (and a second
 * organization with it), two tier plans and a Portal made by the CLI, an admin's MCP client on the
 * provisioning family, and calls that expect success or a refusal that wrote nothing.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { expect } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPlan, insertPortal, provisioningCounts, setGroupsGate } from "./support.js"
import { call, connect, personalKey } from "../support/mcp.js"

/** What a provisioning suite works with. */
export interface ProvisioningSetup {
  readonly server: TestServer
  /** The all-scopes organization key of the organization `other`. */
  readonly otherKey: string
  /** An admin's client on `?tools=provisioning`. */
  readonly admin: Client
  readonly gold: { planId: string; groupId: string }
  readonly silver: { planId: string; groupId: string }
  readonly portal: string
  /** Calls a tool as the admin, expecting success; answers the parsed result. */
  readonly ok: (name: string, args?: Record<string, unknown>) => Promise<any>
  /** Calls a tool as the admin expecting a refusal with `code`, proving the provisioning tables did not change; answers the message. */
  readonly refusedWithoutWrites: (name: string, args: Record<string, unknown>, code: string) => Promise<string>
  readonly stop: () => Promise<void>
}

/** Starts a server and an admin's client for the provisioning family. */
export const provisioningSetup = async (): Promise<ProvisioningSetup> => {
  const server = await startTestServer()
  const otherKey = await server.createOrganization("other")
  await setGroupsGate(server, true)
  await setGroupsGate(server, true, "other")
  const gold = await createPlan(server, "Gold", 500)
  const silver = await createPlan(server, "Silver")
  const portal = await insertPortal(server, { name: "Members" })
  const admin = await connect(server, await personalKey(server, "admin@example.com", "admin"), { tools: "provisioning" })
  return {
    server,
    otherKey,
    admin,
    gold: { planId: gold.id, groupId: gold.groupId },
    silver: { planId: silver.id, groupId: silver.groupId },
    portal,
    ok: async (name, args = {}) => {
      const answer = await call(admin, name, args)
      expect(answer.isError, `${name}: ${JSON.stringify(answer.body)}`).toBe(false)
      return answer.body
    },
    refusedWithoutWrites: async (name, args, code) => {
      const before = await provisioningCounts(server)
      const answer = await call(admin, name, args)
      expect(answer.isError, JSON.stringify(answer.body)).toBe(true)
      expect(answer.body.error).toEqual({ code, message: expect.any(String) })
      expect(await provisioningCounts(server)).toEqual(before)
      return answer.body.error.message as string
    },
    stop: async () => {
      await admin.close()
      await server.stop()
    }
  }
}
