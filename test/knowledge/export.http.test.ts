/**
 * `GET /knowledgebases/{id}/export` over HTTP: a streamed zip with the manifest, pages with front
 * matter and folders as directories, sources.json, memories.json only for personal keys; 3 per
 * minute per key; 413 `export_too_large` over 50 MB; tenancy.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { expectError, insertKnowledgebases, organizationId, personalKey, sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { readZipBuffer } from "../support/zip.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())
beforeEach(() => server.clock.advance(60_000))

const download = async (knowledgebaseId: string, key = server.key) => {
  const response = await fetch(`${server.baseUrl}/knowledgebases/${knowledgebaseId}/export`, {
    headers: { authorization: `Bearer ${key}` }
  })
  return { response, body: Buffer.from(await response.arrayBuffer()) }
}

const createPage = async (knowledgebaseId: string, body: Record<string, unknown>) => {
  const response = await server.request("POST", `/knowledgebases/${knowledgebaseId}/pages`, { body })
  expect(response.status).toBe(201)
  return response.body.page.id as string
}

describe("the archive", () => {
  it("holds the manifest, pages with front matter, folders as directories and sources.json", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Export" })
    const folder = await createPage(kb!.id, { title: "Policies", templateKey: "folder", description: "All of them" })
    const page = await createPage(kb!.id, { title: "Refunds", bodyMarkdown: "# Refunds\n\nWithin 30 days.\n", parentPageId: folder })
    const top = await createPage(kb!.id, { title: "../../etc/passwd", bodyMarkdown: "hostile title" })

    const { response, body } = await download(kb!.id)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/zip")
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="Export 0\.zip"/)
    expect(response.headers.get("x-request-id")).toMatch(/^req_/)

    const entries = await readZipBuffer(body)
    const names = entries.map((entry) => entry.name)
    expect(names).toContain("manifest.json")
    expect(names).toContain("sources.json")
    expect(names).not.toContain("memories.json")
    expect(names).toContain("pages/Policies/")
    for (const name of names) {
      expect(name.startsWith("/")).toBe(false)
      expect(name.split("/")).not.toContain("..")
    }
    const refunds = entries.find((entry) => entry.name === "pages/Policies/Refunds.md")!
    const [, frontMatter, markdown] = refunds.data.toString("utf8").split(/^---\n/m)
    expect(parseYaml(frontMatter!)).toMatchObject({ id: page, title: "Refunds", template: "page", path: ["Policies"] })
    expect(markdown).toBe("# Refunds\n\nWithin 30 days.\n")
    const hostile = entries.find((entry) => entry.data.toString("utf8").includes(`id: "${top}"`))
    expect(hostile?.name.startsWith("pages/")).toBe(true)

    const manifest = JSON.parse(entries.find((entry) => entry.name === "manifest.json")!.data.toString("utf8"))
    expect(manifest).toMatchObject({ knowledgebase: { id: kb!.id, name: "Export 0" }, counts: { pages: 2, folders: 1, sources: 0 } })
    expect(JSON.parse(entries.find((entry) => entry.name === "sources.json")!.data.toString("utf8"))).toEqual([])
  })

  it("gives each page its real created time, distinct from updated after an edit", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Dates" })
    const created = await server.request("POST", `/knowledgebases/${kb!.id}/pages`, { body: { title: "Dated", bodyMarkdown: "v1" } })
    expect(created.status).toBe(201)
    const page = created.body.page as { id: string; createdAt: string }
    server.clock.advance(3_600_000)
    const edited = await server.request("PATCH", `/knowledgebases/${kb!.id}/pages/${page.id}`, {
      body: { patch: [{ op: "append", text: " v2" }] }
    })
    expect(edited.status).toBe(200)
    const updatedAt = edited.body.page.updatedAt as string
    expect(updatedAt).not.toBe(page.createdAt)

    const { response, body } = await download(kb!.id)
    expect(response.status).toBe(200)
    const file = (await readZipBuffer(body)).find((entry) => entry.name === "pages/Dated.md")!
    const [, frontMatter, markdown] = file.data.toString("utf8").split(/^---\n/m)
    expect(parseYaml(frontMatter!)).toMatchObject({ id: page.id, created: page.createdAt, updated: updatedAt })
    expect(markdown).toBe("v1 v2")
  })

  it("adds memories.json for a personal key", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Personal" })
    const key = await personalKey(server, { email: "reader@example.com", role: "viewer", scopes: ["knowledge:read"] })
    const { response, body } = await download(kb!.id, key)
    expect(response.status).toBe(200)
    const memories = (await readZipBuffer(body)).find((entry) => entry.name === "memories.json")
    expect(JSON.parse(memories!.data.toString("utf8"))).toEqual([])
  })
})

describe("limits and refusals", () => {
  it("allows 3 exports per minute per key, then 429 with Retry-After", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Limited" })
    for (let i = 0; i < 3; i++) expect((await download(kb!.id)).response.status).toBe(200)
    const refused = await server.request("GET", `/knowledgebases/${kb!.id}/export`)
    expectError(refused, 429, "rate_limited")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    server.clock.advance(60_000)
    expect((await download(kb!.id)).response.status).toBe(200)
  })

  it("refuses a Knowledgebase over 50 MB with 413 export_too_large before sending anything", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Huge" })
    const org = await organizationId(server)
    const body = "x".repeat(255 * 1024)
    const rows = Array.from({ length: 210 }, (_, i) => ({
      id: randomUUID(),
      organization_id: org,
      knowledgebase_id: kb!.id,
      parent_page_id: null,
      title: `Page ${i}`,
      description: "",
      template_key: "page",
      markdown: body,
      hook: "",
      revision: 1,
      author: null,
      created_at: "2026-11-01T00:00:00.000Z",
      updated_at: "2026-11-01T00:00:00.000Z"
    }))
    for (const row of rows) await sql(server, (db) => db`INSERT INTO pages ${db.insert(row)}`)
    expectError(await server.request("GET", `/knowledgebases/${kb!.id}/export`), 413, "export_too_large")
  })

  it("is 404 for another organization's Knowledgebase and needs knowledge:read", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Private" })
    const other = await server.createOrganization("export-other")
    expectError(await server.request("GET", `/knowledgebases/${kb!.id}/export`, { key: other }), 404, "not_found")
    const agentsOnly = await server.createKey({ name: "agents", scopes: ["agents:read"] })
    expectError(await server.request("GET", `/knowledgebases/${kb!.id}/export`, { key: agentsOnly }), 403, "insufficient_scope")
  })
})
