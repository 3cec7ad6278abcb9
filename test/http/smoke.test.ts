import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

describe("smoke", () => {
  it("creates and lists a Knowledgebase", async () => {
    const created = await server.request("POST", "/knowledgebases", { body: { name: "Handbook" } })
    expect(created.status).toBe(201)
    const list = await server.request("GET", "/knowledgebases")
    expect(list.body.knowledgebases.map((kb: any) => kb.name)).toEqual(["Handbook"])
    const bad = await server.request("POST", "/knowledgebases", { body: "{bad" })
    expect(bad.body).toEqual({ error: { code: "invalid_request", message: "The request body is not valid JSON." } })
  })
})
