import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, connect, personalKey, toolNames } from "./helpers.js"

let server: TestServer
let memberKey: string

beforeAll(async () => {
  server = await startTestServer()
  memberKey = await personalKey(server, "member@example.com", "member")
})
afterAll(() => server.stop())

describe("MCP over Streamable HTTP", () => {
  it("connects with a personal key and answers whoami", async () => {
    const client = await connect(server, memberKey)
    const names = await toolNames(client)
    expect(names).toContain("whoami")
    const who = await call(client, "whoami")
    expect(who.isError).toBe(false)
    expect(who.body.organization.slug).toBe("default")
    expect(who.body.role).toBe("member")
    await client.close()
  })
})
