/**
 * Tool names (issue 23): every tool of every family, the per-item tools and the old names still
 * accepted stay within 64 characters of `[a-zA-Z0-9_-]` (what the function-calling APIs of model
 * providers accept; MCP 2025-11-25 allows 1 to 128 of `[A-Za-z0-9._-]`, checked too with the SDK's
 * own validator), and are unique. Per-item names are cut to fit, whatever the item is called; over
 * a real server, an admin offered every family gets such names for Agents whose long names share
 * their first 91 characters.
 */
import { validateToolName } from "@modelcontextprotocol/sdk/shared/toolNameValidation.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { legacyToolNames } from "../../server/mcp-door/names.js"
import { itemToolName } from "../../server/runtime/mcp/items.js"
import { connect, personalKey, toolNames } from "../support/mcp.js"
import { everyTool } from "../support/mcp-tools.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createAgent } from "../runtime/support.js"

/** What model providers' function-calling APIs accept as a name (the narrowest of them: at most 64). */
const providerName = /^[a-zA-Z0-9_-]{1,64}$/
/** What MCP 2025-11-25 says a tool name should be (Tool names). */
const mcpName = /^[A-Za-z0-9._-]{1,128}$/

/** The names among `names` that are not tool names every client and provider takes, each with why. */
const badNames = (names: ReadonlyArray<string>): Array<string> =>
  names.flatMap((name) => {
    const problems = [
      ...(providerName.test(name) ? [] : ["not 1 to 64 of [a-zA-Z0-9_-]"]),
      ...(mcpName.test(name) ? [] : ["not an MCP tool name"]),
      ...(validateToolName(name).isValid ? [] : ["refused by the SDK"])
    ]
    return problems.length === 0 ? [] : [`${name}: ${problems.join(", ")}`]
  })

describe("tool names", () => {
  it("are at most 64 characters of [a-zA-Z0-9_-] for every tool, per-item and old name, and unique", async () => {
    const names = (await everyTool()).map((tool) => tool.name)
    expect(badNames([...names, ...Object.keys(legacyToolNames), ...Object.values(legacyToolNames)])).toEqual([])
    expect(new Set(names).size).toBe(names.length)
    expect(names.length).toBeGreaterThan(40)
  })

  it("cut a per-item name to fit whatever the item is called, and keep each unique", () => {
    const taken = new Set<string>()
    const long = "A very long Agent name that goes on and on ".repeat(5)
    const ids = ["11111111-0000-4000-8000-000000000000", "22222222-0000-4000-8000-000000000000", "33333333-0000-4000-8000-000000000000"]
    const names = [
      itemToolName("agent", long, ids[0]!, taken),
      itemToolName("agent", long, ids[1]!, taken),
      itemToolName("agent", `${long}!`, ids[2]!, taken),
      itemToolName("agent", long, "11111111-0000-4000-8000-000000000001", taken),
      itemToolName("agent", long, "11111111-0000-4000-8000-000000000002", taken),
      itemToolName("flow", "日本語だけ", ids[0]!, taken),
      itemToolName("app", "Café — déjà vu", ids[1]!, taken)
    ]
    expect(badNames(names)).toEqual([])
    expect(new Set(names).size).toBe(names.length)
    expect(names.slice(5)).toEqual(["flow_item", "app_cafe_deja_vu"])
    expect(names.slice(0, 5).map((name) => name.length)).toEqual([64, 64, 64, 64, 64])
    // A name taken ends in the start of the id, longer while that is taken too.
    expect(names.slice(1, 5).map((name) => name.slice(name.lastIndexOf("_") + 1))).toEqual(["22222222", "33333333", "11111111", "11111111-000"])
  })
})

describe("tool names over a real server", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.stop()
  })

  it("offer an admin of every family only names within the bounds, per-item tools of long names included", async () => {
    const prefix = "Customer support assistant for the northern region, answering from the handbook and the FAQ"
    for (const suffix of [" (day shift)", " (night shift)", " (weekends and holidays)"]) await createAgent(server, { name: `${prefix}${suffix}` })
    const admin = await connect(server, await personalKey(server, "admin@example.com", "admin"))
    const names = await toolNames(admin)
    const perItem = names.filter((name) => name.startsWith("agent_"))
    expect(perItem).toHaveLength(3)
    expect(badNames(names)).toEqual([])
    expect(new Set(names).size).toBe(names.length)
    await admin.close()
  })
})
