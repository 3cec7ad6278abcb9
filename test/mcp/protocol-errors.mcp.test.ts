/**
 * Requests the MCP SDK's server would answer as a tool result or an internal error, answered as
 * MCP 2025-11-25 asks (issue 23): a call of a tool the caller is not offered, and a tool list
 * asked with a cursor that is not a string, are the JSON-RPC error -32602 (invalid params).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, connect, personalKey } from "../support/mcp.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let viewer: Client
beforeAll(async () => {
  server = await startTestServer()
  viewer = await connect(server, await personalKey(server, "viewer@example.com", "viewer"), { tools: "knowledge" })
})
afterAll(async () => {
  await viewer?.close()
  await server?.stop()
})

describe("protocol errors", () => {
  it("a tool no family has: -32602, and the session goes on", async () => {
    await expect(call(viewer, "no_such_tool")).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown tool: no_such_tool. tools/list names the tools this key is offered.")
    })
    expect((await call(viewer, "whoami")).isError).toBe(false)
  })

  it("a tool of a family the role cannot use: -32602, nothing written", async () => {
    const before = (await server.request("GET", "/knowledgebases")).body
    await expect(call(viewer, "create_knowledgebase", { name: "Never" })).rejects.toMatchObject({ code: -32602 })
    expect((await server.request("GET", "/knowledgebases")).body).toEqual(before)
  })

  it("a tool list asked with a cursor that is not a string: -32602, not -32603", async () => {
    await expect(viewer.request({ method: "tools/list", params: { cursor: 5 as unknown as string } }, ListToolsResultSchema)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("params.cursor: a string")
    })
    expect((await viewer.listTools()).tools.length).toBeGreaterThan(0)
  })
})

describe("whoami.families", () => {
  it("names the families the caller is offered a tool of, not every family the address selects", async () => {
    const everything = await connect(server, await personalKey(server, "viewer-all@example.com", "viewer"))
    const admin = await connect(server, await personalKey(server, "admin-all@example.com", "admin"))
    try {
      const offered = (await call(everything, "whoami")).body.families as Array<string>
      expect(offered).toContain("knowledge")
      expect(offered).not.toContain("authoring")
      expect(offered).not.toContain("provisioning")
      const adminFamilies = (await call(admin, "whoami")).body.families as Array<string>
      expect(adminFamilies).toEqual(expect.arrayContaining(["authoring", "knowledge", "provisioning"]))
      expect(adminFamilies.length).toBeGreaterThan(offered.length)
      expect((await call(viewer, "whoami")).body.families).toEqual(["knowledge"])
    } finally {
      await everything.close()
      await admin.close()
    }
  })
})
