/** `svc keys activity --connection ID`: what one MCP connection searched and read, beside the key's REST activity. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { removeDataDirs, svc, svcJson } from "../cli/helpers.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, connect, personalKey } from "../support/mcp.js"

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.stop()
  await removeDataDirs()
})

describe("activity per MCP connection", () => {
  it("lists only what came through the connection, and shows the via column", async () => {
    const key = await personalKey(server, "reader@example.com", "member")
    const client = await connect(server, key, { tools: "knowledge" })
    const kb = await call(client, "create_knowledgebase", { name: "Notes" })
    const kbId = kb.body.knowledgebase.id
    const page = await call(client, "save_page", { knowledgebaseId: kbId, title: "Zebra", bodyMarkdown: "Zebra crossings." })
    await call(client, "read_page", { knowledgebaseId: kbId, pageId: page.body.page.id })
    expect((await server.request("GET", `/knowledgebases/${kbId}`, { key })).status).toBe(200)
    await server.flush()
    const who = await call(client, "whoami")
    const keyId = who.body.key.id as string
    const connectionId = who.body.connectionId as string
    const all = await svcJson(["keys", "activity", "--org", "default", keyId], server.dataDir)
    expect(all.activity.map((entry: { action: string; connectionId: string | null }) => [entry.action, entry.connectionId])).toEqual([
      ["read_knowledgebase", null],
      ["read_page", connectionId]
    ])
    const mine = await svcJson(["keys", "activity", "--org", "default", keyId, "--connection", connectionId], server.dataDir)
    expect(mine.activity.map((entry: { action: string }) => entry.action)).toEqual(["read_page"])
    const human = await svc(["keys", "activity", "--org", "default", keyId], server.dataDir)
    expect(human.stdout).toMatch(/^TIME +VIA +ACTION/m)
    expect(human.stdout).toContain(connectionId)
    await client.close()
  })
})
