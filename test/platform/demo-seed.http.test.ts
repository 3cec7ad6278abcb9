/**
 * `svc serve --demo` on an empty data directory: a Knowledgebase of handbook pages and a price list
 * PDF (indexed), a published support Agent on it, a published lead-qualification Flow with typed
 * questions, and a published App combining them with a Transaction Service; a later start of the
 * same data directory seeds nothing again, and `--demo` on a data directory that started without it
 * seeds it then, once.
 */
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { dropTestDatabase, startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ server: { demo: true } })
})
afterAll(() => server?.stop())

const waitForReady = async (knowledgebaseId: string) => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const listed = await server.request("GET", `/knowledgebases/${knowledgebaseId}/sources`)
    if (listed.body.sources.every((source: { status: string }) => source.status === "ready")) return listed.body.sources
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the demo's PDF was never indexed")
}

describe("svc serve --demo", () => {
  it("names what it seeded", () => {
    expect(server.demo).toEqual({
      knowledgebaseId: expect.any(String),
      agentId: expect.any(String),
      flowId: expect.any(String),
      appId: expect.any(String),
      created: true
    })
  })

  it("seeds a Knowledgebase of real pages and an indexed PDF that search cites", async () => {
    const { knowledgebaseId } = server.demo!
    const kb = (await server.request("GET", `/knowledgebases/${knowledgebaseId}`)).body.knowledgebase
    expect(kb.name).toBe("Northwind handbook")
    expect(kb.counts).toEqual({ pages: 5, sources: 1 })
    const [pdf] = await waitForReady(knowledgebaseId)
    expect(pdf).toMatchObject({ name: "Price list and product care.pdf", type: "pdf", status: "ready" })
    const found = await server.request("POST", `/knowledgebases/${knowledgebaseId}/search`, { body: { query: "volume discount" } })
    expect(found.status).toBe(200)
    expect(found.body.results[0]).toMatchObject({ kind: "document", citation: { sourceName: "Price list and product care.pdf" } })
    const refunds = await server.request("POST", `/knowledgebases/${knowledgebaseId}/search`, { body: { query: "refund receipt", kinds: ["pages"] } })
    expect(refunds.body.results[0]).toMatchObject({ kind: "page", title: "Refunds and returns" })
  })

  it("publishes the support Agent on it, the Flow with typed questions, and the App combining them", async () => {
    const { knowledgebaseId, agentId, flowId, appId } = server.demo!
    const agent = (await server.request("GET", `/agents/${agentId}`)).body.agent
    expect(agent).toMatchObject({ name: "Support agent", knowledgebaseIds: [knowledgebaseId], version: 1 })
    const flow = (await server.request("GET", `/flows/${flowId}`)).body.flow
    expect(flow.name).toBe("Lead qualification")
    expect(flow.inputs.map((input: { name: string; type: string }) => `${input.name}:${input.type}`)).toEqual([
      "company_name:text",
      "contact_email:email",
      "team_size:select",
      "budget:number",
      "needed_by:date",
      "items:multi_select",
      "notes:long_text"
    ])
    const app = (await server.request("GET", `/apps/${appId}`)).body.app
    expect(app).toMatchObject({
      name: "Northwind desk",
      services: { conversation: true, transaction: true },
      agents: [{ id: agentId, version: 1 }],
      flows: [{ id: flowId, version: 1 }]
    })
  })

  it("answers the README's tour with the builtin model: the Agent cites the handbook, the Flow qualifies a lead, the App greets and routes", async () => {
    const { knowledgebaseId, agentId, flowId, appId } = server.demo!
    await waitForReady(knowledgebaseId)
    const asked = await server.request("POST", `/agents/${agentId}/conversation`, { body: { message: "How do refunds work?" } })
    expect(asked.status).toBe(200)
    expect(asked.body.reply).toContain("Refunds and returns")
    const lead = await server.request("POST", `/flows/${flowId}/run`, {
      body: { inputs: { company_name: "Acme", contact_email: "ops@acme.test", team_size: "11-50", items: ["Desks", "Chairs"] } }
    })
    expect(lead.status).toBe(200)
    expect(lead.body.output).toContain("Lead: Acme (11-50 people) wants Desks, Chairs")
    const greeted = await server.request("POST", `/apps/${appId}/conversation`, { body: { message: "How do refunds work?" } })
    expect(greeted.status).toBe(200)
    expect(greeted.body.greeting).toContain("Welcome to Northwind")
    expect(greeted.body.reply).toContain("Refunds and returns")
    const transaction = await server.request("POST", `/apps/${appId}/transaction`, { body: { input: { question: "How do refunds work?" } } })
    expect(transaction.status).toBe(200)
    expect(transaction.body.output.answer).toContain("Refunds and returns")
  })

  it("seeds nothing on a later start of the same data directory: it reports the demo that is there", async () => {
    await server.flush()
    const again = await startTestServer({ dataDir: server.dataDir, key: server.key, server: { demo: true } })
    try {
      expect(again.demo).toEqual({ ...server.demo, created: false })
      expect((await again.request("GET", "/agents")).body.agents).toHaveLength(1)
    } finally {
      await again.stop()
    }
  })
})

describe("svc serve --demo on a data directory that started without it", () => {
  it("seeds the demo once, through a key made for it and revoked after, and a third start finds it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-demo-"))
    try {
      const plain = await startTestServer({ dataDir })
      const key = plain.key
      expect((await plain.request("GET", "/agents")).body.agents).toHaveLength(0)
      await plain.flush()
      await plain.stop()
      const seeded = await startTestServer({ dataDir, key, server: { demo: true } })
      try {
        expect(seeded.bootstrapKey).toBeNull()
        expect(seeded.demo).toMatchObject({ created: true, agentId: expect.any(String) })
        const agent = (await seeded.request("GET", `/agents/${seeded.demo!.agentId}`)).body.agent
        expect(agent).toMatchObject({ name: "Support agent", version: 1 })
        expect((await seeded.request("GET", "/agents")).body.agents).toHaveLength(1)
        const keys = await seeded.admin(Effect.flatMap(AccountsService, (accounts) => accounts.listKeys("default")))
        expect(keys.filter((k) => k.name === "demo").map((k) => k.revokedAt !== null)).toEqual([true])
        await seeded.flush()
      } finally {
        await seeded.stop()
      }
      const third = await startTestServer({ dataDir, key, server: { demo: true } })
      try {
        expect(third.demo).toEqual({ ...seeded.demo, created: false })
        expect((await third.request("GET", "/agents")).body.agents).toHaveLength(1)
      } finally {
        await third.stop()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
      await dropTestDatabase(dataDir)
    }
  })
})
