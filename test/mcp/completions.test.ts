/**
 * `completion/complete` (issue 23) through the MCP SDK's client: the server declares `completions`;
 * the variables of the resource templates complete to the ids of the Knowledgebases, pages, sources
 * and published Agents, Flows and Apps the caller may read (by name prefix, id prefix, then name
 * anywhere; by name within each), at most 100 with `total` and `hasMore`; another organization's, an unreadable kind's
 * (scopes, families) and folders never show; a prompt (svc has none) or a template it does not
 * serve is -32602; resources of the new kinds read as REST answers them.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { agentTemplate, appTemplate, flowTemplate, pageTemplate, sourceTemplate } from "../../server/mcp-door/resource-uris.js"
import { insertKnowledgebases } from "../support/fixtures.js"
import { createFolder, createPage } from "../support/knowledge.js"
import { connect, personalKey } from "../support/mcp.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createAgent } from "../runtime/support.js"

let server: TestServer
let memberKey: string
let member: Client
const kb: Record<string, string> = {}
const page: Record<string, string> = {}
let sourceId: string
let agentId: string
let draftAgentId: string

const created = async (path: string, body: Record<string, unknown>, key?: string): Promise<any> => {
  const response = await server.request("POST", path, { body, ...(key === undefined ? {} : { key }) })
  expect([201, 202]).toContain(response.status)
  return response.body
}

/** The completion of `variable` of `template` for `client`. */
const complete = (client: Client, template: string, variable: string, value: string, context?: Record<string, string>) =>
  client.complete({ ref: { type: "ref/resource", uri: template }, argument: { name: variable, value }, ...(context === undefined ? {} : { context: { arguments: context } }) })

beforeAll(async () => {
  server = await startTestServer()
  memberKey = await personalKey(server, "member@example.com", "member")
  member = await connect(server, memberKey)
  for (const name of ["Handbook", "Hiring guide", "Sales playbook"]) kb[name] = (await created("/knowledgebases", { name })).knowledgebase.id
  page["Refund policy"] = await createPage(server, kb["Handbook"]!, { title: "Refund policy", bodyMarkdown: "Within 30 days." })
  page["Returns"] = await createPage(server, kb["Handbook"]!, { title: "Returns", bodyMarkdown: "Send it back." })
  page["Shipping"] = await createPage(server, kb["Handbook"]!, { title: "Shipping", bodyMarkdown: "Two days." })
  page["Records"] = await createFolder(server, kb["Handbook"]!, "Records")
  sourceId = (await created(`/knowledgebases/${kb["Handbook"]}/sources`, { name: "Price list", contentMarkdown: "# Prices\n\nTen euros." })).source.id
  agentId = await createAgent(server, { name: "Support bot" })
  draftAgentId = await createAgent(server, { name: "Draft bot" }, { publish: false })
})
afterAll(async () => {
  await member.close()
  await server.stop()
})

describe("completion/complete", () => {
  it("is declared, beside a template for each kind of resource", async () => {
    expect(member.getServerCapabilities()?.completions).toEqual({})
    expect(member.getInstructions()).toContain("also resources (svc://…), whose ids complete")
    const templates = (await member.listResourceTemplates()).resourceTemplates
    expect(templates.map((template) => template.uriTemplate).sort()).toEqual([agentTemplate, appTemplate, flowTemplate, pageTemplate, sourceTemplate].sort())
    expect(templates.find((template) => template.uriTemplate === sourceTemplate)).toMatchObject({ name: "source", mimeType: "application/json" })
  })

  it("completes a Knowledgebase by name prefix, id prefix and a word within its name, answering ids", async () => {
    const byPrefix = await complete(member, pageTemplate, "knowledgebaseId", "h")
    expect(byPrefix.completion).toEqual({ values: [kb["Handbook"], kb["Hiring guide"]], total: 2, hasMore: false })
    expect((await complete(member, pageTemplate, "knowledgebaseId", "PLAY")).completion.values).toEqual([kb["Sales playbook"]])
    const idPrefix = kb["Sales playbook"]!.slice(0, 8)
    expect((await complete(member, sourceTemplate, "knowledgebaseId", idPrefix)).completion.values).toEqual([kb["Sales playbook"]])
    expect((await complete(member, pageTemplate, "knowledgebaseId", "")).completion.values).toEqual([kb["Handbook"], kb["Hiring guide"], kb["Sales playbook"]])
    expect((await complete(member, pageTemplate, "knowledgebaseId", "nothing like it")).completion).toEqual({ values: [], total: 0, hasMore: false })
  })

  it("completes the pages (never folders) of the Knowledgebase the other argument names, by id or exact name", async () => {
    const byId = await complete(member, pageTemplate, "pageId", "re", { knowledgebaseId: kb["Handbook"]! })
    expect(byId.completion.values).toEqual([page["Refund policy"], page["Returns"]])
    const byName = await complete(member, pageTemplate, "pageId", "", { knowledgebaseId: "Handbook" })
    expect(byName.completion.values).toEqual([page["Refund policy"], page["Returns"], page["Shipping"]])
    expect((await complete(member, pageTemplate, "pageId", "rec", { knowledgebaseId: kb["Handbook"]! })).completion.values).toEqual([])
    expect((await complete(member, pageTemplate, "pageId", "re")).completion.values).toEqual([])
    expect((await complete(member, pageTemplate, "pageId", "re", { knowledgebaseId: kb["Hiring guide"]! })).completion.values).toEqual([])
  })

  it("completes the sources of a Knowledgebase, and reads one as get_source answers it", async () => {
    expect((await complete(member, sourceTemplate, "sourceId", "price", { knowledgebaseId: kb["Handbook"]! })).completion.values).toEqual([sourceId])
    const uri = `svc://knowledgebases/${kb["Handbook"]}/sources/${sourceId}`
    const read = await member.readResource({ uri })
    const rest = await server.request("GET", `/knowledgebases/${kb["Handbook"]}/sources/${sourceId}`)
    expect(read.contents).toEqual([{ uri, mimeType: "application/json", text: expect.any(String) }])
    const body = JSON.parse((read.contents[0] as { text: string }).text)
    expect(body.source).toMatchObject({ id: sourceId, name: "Price list" })
    expect(Object.keys(body.source).sort()).toEqual(Object.keys(rest.body.source).sort())
  })

  it("completes published Agents only, and reads one as GET /agents/{id} answers it", async () => {
    expect((await complete(member, agentTemplate, "agentId", "bot")).completion.values).toEqual([agentId])
    expect((await complete(member, agentTemplate, "agentId", "draft")).completion.values).toEqual([])
    const read = await member.readResource({ uri: `svc://agents/${agentId}` })
    const rest = await server.request("GET", `/agents/${agentId}`)
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(rest.body)
    await expect(member.readResource({ uri: `svc://agents/${draftAgentId}` })).rejects.toMatchObject({ code: -32002 })
    expect((await complete(member, flowTemplate, "flowId", "")).completion.values).toEqual([])
  })

  it("completes published Flows, and Apps once the organization's apps gate lets them be read", async () => {
    const publish = async (kind: "flows" | "apps", body: Record<string, unknown>) => {
      const made = await server.request("POST", `/${kind}`, { body })
      expect({ status: made.status, body: made.body }).toMatchObject({ status: 201 })
      const id = (made.body.flow ?? made.body.app).id as string
      expect((await server.request("POST", `/${kind}/${id}/publish`)).status).toBe(200)
      return id
    }
    const flowId = await publish("flows", { name: "Intake flow", questions: [], steps: [{ type: "template", name: "greeting", template: "Hello" }] })
    expect((await complete(member, flowTemplate, "flowId", "in")).completion.values).toEqual([flowId])
    const flowRead = await member.readResource({ uri: `svc://flows/${flowId}` })
    expect(JSON.parse((flowRead.contents[0] as { text: string }).text)).toEqual((await server.request("GET", `/flows/${flowId}`)).body)

    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { enable: ["apps"] })))
    const appId = await publish("apps", { name: "Help desk", agentIds: [agentId] })
    expect((await complete(member, appTemplate, "appId", "desk")).completion.values).toEqual([appId])
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { disable: ["apps"] })))
    expect((await complete(member, appTemplate, "appId", "desk")).completion.values).toEqual([])
  })

  it("gives nothing of another organization, nor of a kind the key's scopes or the address's families leave out", async () => {
    await server.createOrganization("other")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("other", { enable: ["mcp"] })))
    const outsiderKey = await personalKey(server, "outsider@example.com", "admin", "other")
    const outsider = await connect(server, outsiderKey)
    expect((await complete(outsider, pageTemplate, "knowledgebaseId", "")).completion.values).toEqual([])
    expect((await complete(outsider, pageTemplate, "pageId", "", { knowledgebaseId: kb["Handbook"]! })).completion.values).toEqual([])
    expect((await complete(outsider, agentTemplate, "agentId", "")).completion.values).toEqual([])
    await outsider.close()

    await server.addMember("agents-only@example.com", "member")
    const agentsOnlyKey = await server.createKey({ name: "agents only", scopes: ["agents:read"], personalFor: "agents-only@example.com" })
    const agentsOnly = await connect(server, agentsOnlyKey)
    expect((await complete(agentsOnly, pageTemplate, "knowledgebaseId", "")).completion.values).toEqual([])
    expect((await complete(agentsOnly, sourceTemplate, "sourceId", "", { knowledgebaseId: kb["Handbook"]! })).completion.values).toEqual([])
    expect((await complete(agentsOnly, agentTemplate, "agentId", "")).completion.values).toEqual([agentId])
    await agentsOnly.close()

    const runOnly = await connect(server, memberKey, { tools: "run" })
    expect((await complete(runOnly, pageTemplate, "knowledgebaseId", "")).completion.values).toEqual([])
    expect((await complete(runOnly, agentTemplate, "agentId", "")).completion.values).toEqual([agentId])
    await runOnly.close()
    const knowledgeOnly = await connect(server, memberKey, { tools: "knowledge" })
    expect((await complete(knowledgeOnly, agentTemplate, "agentId", "")).completion.values).toEqual([])
    await knowledgeOnly.close()
  })

  it("answers at most 100 values, with the total and hasMore", async () => {
    await server.createOrganization("bulk")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("bulk", { enable: ["mcp"] })))
    const bulkKey = await personalKey(server, "bulk@example.com", "member", "bulk")
    const inserted = await insertKnowledgebases(server, { org: "bulk", count: 150, prefix: "Bulk" })
    const client = await connect(server, bulkKey)
    const idOf = (name: string) => inserted.find((row) => row.name === name)!.id
    const all = await complete(client, pageTemplate, "knowledgebaseId", "bulk")
    expect(all.completion).toMatchObject({ total: 150, hasMore: true })
    expect(all.completion.values).toHaveLength(100)
    expect(new Set(all.completion.values).size).toBe(100)
    // By name: "Bulk 0", "Bulk 1", "Bulk 10", "Bulk 100", ...
    expect(all.completion.values.slice(0, 4)).toEqual(["Bulk 0", "Bulk 1", "Bulk 10", "Bulk 100"].map(idOf))
    const few = await complete(client, pageTemplate, "knowledgebaseId", "Bulk 14")
    expect(few.completion).toEqual({ values: ["Bulk 14", ...Array.from({ length: 10 }, (_, i) => `Bulk 14${i}`)].map(idOf), total: 11, hasMore: false })
    await client.close()
  })

  it("counts each completion the caller may get as one request of the key's rate, shared with REST; one it may not get counts none", async () => {
    const limited = await startTestServer({ server: { requestsPerMinute: 3 } })
    try {
      await limited.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("default", { enable: ["mcp"] })))
      const key = await personalKey(limited, "busy@example.com", "member")
      const client = await connect(limited, key, { tools: "knowledge" })
      for (let i = 0; i < 3; i++) expect((await complete(client, agentTemplate, "agentId", "")).completion.values).toEqual([])
      expect((await complete(client, pageTemplate, "knowledgebaseId", "")).completion.values).toEqual([])
      expect((await complete(client, pageTemplate, "knowledgebaseId", "")).completion.values).toEqual([])
      expect((await limited.request("GET", "/knowledgebases", { key })).status).toBe(200)
      await expect(complete(client, pageTemplate, "knowledgebaseId", "")).rejects.toMatchObject({
        code: -32600,
        message: expect.stringContaining("rate_limited"),
        data: { error: { code: "rate_limited" } }
      })
      expect((await limited.request("GET", "/knowledgebases", { key })).status).toBe(429)
      await client.close()
    } finally {
      await limited.stop()
    }
  })

  it("refuses a prompt (svc has none) and a template it does not serve with -32602", async () => {
    await expect(
      member.complete({ ref: { type: "ref/prompt", name: "test_prompt_with_arguments" }, argument: { name: "arg1", value: "test" } })
    ).rejects.toMatchObject({ code: -32602 })
    await expect(complete(member, "svc://nothing/{id}", "id", "")).rejects.toMatchObject({ code: -32602 })
  })
})
