/**
 * The knowledge family through the MCP SDK's client: tool lists per role and family, reads and
 * writes over the same services as REST, names for ids, old spellings, tool errors with the REST
 * envelope, tenancy, a role change between two requests, page resources, memories and each
 * connection's own activity list.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ActivityLog } from "../../server/knowledge/activity/service.js"
import { AccountsService } from "../../server/identity/service.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, connect, personalKey, toolNames } from "../support/mcp.js"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"

let server: TestServer
let memberKey: string
let viewerKey: string
let member: Client
let kbId: string
let pageId: string

const knowledgeReads = [
  "get_knowledgebase_outline",
  "get_source",
  "list_changes",
  "list_knowledgebases",
  "list_memories",
  "list_pages",
  "list_sources",
  "read_page",
  "search_knowledgebase"
]
const knowledgeWrites = ["append_page", "create_folder", "create_knowledgebase", "move_page", "move_source", "save_page", "upload_source"]
const memoryTools = ["forget", "remember"]

beforeAll(async () => {
  server = await startTestServer()
  memberKey = await personalKey(server, "member@example.com", "member")
  viewerKey = await personalKey(server, "viewer@example.com", "viewer")
  member = await connect(server, memberKey, { tools: "knowledge" })
  const kb = await call(member, "create_knowledgebase", { name: "Handbook", description: "How we work" })
  kbId = kb.body.knowledgebase.id
  const page = await call(member, "save_page", { knowledgebaseId: "Handbook", title: "Refund policy", bodyMarkdown: "# Refunds\n\nWithin 30 days." })
  pageId = page.body.page.id
})
afterAll(async () => {
  await member.close()
  await server.stop()
})

describe("tool lists", () => {
  it("offers a member every knowledge tool and the core tools, and none of the provisioning family (admins only)", async () => {
    expect(await toolNames(member)).toEqual([...knowledgeReads, ...knowledgeWrites, ...memoryTools, "search_docs", "whoami"].sort())
    const provisioning = await connect(server, memberKey, { tools: "provisioning" })
    expect(await toolNames(provisioning)).toEqual(["search_docs", "whoami"])
    // The address selects provisioning, but a member is offered none of its tools: whoami names no family.
    expect((await call(provisioning, "whoami")).body.families).toEqual([])
    await provisioning.close()
  })

  it("leaves the write tools out for a viewer, and refuses them if called", async () => {
    const viewer = await connect(server, viewerKey, { tools: "knowledge" })
    const names = await toolNames(viewer)
    expect(names).toEqual([...knowledgeReads, ...memoryTools, "search_docs", "whoami"].sort())
    await expect(call(viewer, "create_knowledgebase", { name: "Nope" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown tool: create_knowledgebase.")
    })
    await viewer.close()
  })

  it("shows a role change on the next request of the same connection", async () => {
    const key = await personalKey(server, "promoted@example.com", "viewer")
    const client = await connect(server, key, { tools: "knowledge" })
    expect(await toolNames(client)).not.toContain("save_page")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setMemberRole("default", "promoted@example.com", "member")))
    expect(await toolNames(client)).toContain("save_page")
    expect((await call(client, "whoami")).body.role).toBe("member")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setMemberRole("default", "promoted@example.com", "viewer")))
    expect(await toolNames(client)).not.toContain("save_page")
    await client.close()
  })
})

describe("reads", () => {
  it("lists Knowledgebases as {items, nextCursor} with limit, cursor and fields", async () => {
    server.clock.advance(1000)
    await call(member, "create_knowledgebase", { name: "Second" })
    const first = await call(member, "list_knowledgebases", { limit: 1, fields: ["id", "name"] })
    expect(first.body).toEqual({ items: [{ id: kbId, name: "Handbook" }], nextCursor: expect.any(String) })
    const second = await call(member, "list_knowledgebases", { limit: 1, cursor: first.body.nextCursor, fields: ["name"] })
    expect(second.body.items).toEqual([{ name: "Second" }])
    const bad = await call(member, "list_knowledgebases", { cursor: "forged" })
    expect(bad).toEqual({ isError: true, body: { error: { code: "invalid_request", message: expect.any(String) } } })
  })

  it("reads a page by id or by exact title, with a 2 KB preview unless view is full", async () => {
    const long = "x".repeat(5000)
    const created = await call(member, "save_page", { knowledgebaseId: kbId, title: "Long page", bodyMarkdown: long })
    expect(created.isError).toBe(false)
    const summary = await call(member, "read_page", { knowledgebaseId: "Handbook", pageId: "Long page" })
    expect(summary.body.truncated).toBe(true)
    expect(Buffer.byteLength(summary.body.page.markdown)).toBe(2048)
    expect(summary.body.totalBytes).toBe(5000)
    const full = await call(member, "read_page", { knowledgebaseId: kbId, pageId: created.body.page.id, view: "full" })
    expect(full.body.page.markdown).toBe(long)
    const short = await call(member, "read_page", { knowledgebaseId: kbId, pageId })
    expect(short.body).toMatchObject({ truncated: false, page: { id: pageId, markdown: "# Refunds\n\nWithin 30 days." } })
  })

  it("names up to five near matches when a name matches nothing, and lists both ids when two share a name", async () => {
    const miss = await call(member, "read_page", { knowledgebaseId: kbId, pageId: "Refund polcy" })
    expect(miss.isError).toBe(true)
    expect(miss.body.error.code).toBe("not_found")
    expect(miss.body.error.message).toContain(`'Refund policy' (${pageId})`)
    const a = await call(member, "create_knowledgebase", { name: "Twin" })
    const b = await call(member, "create_knowledgebase", { name: "Twin" })
    const both = await call(member, "list_pages", { knowledgebaseId: "Twin" })
    expect(both.body.error.code).toBe("invalid_request")
    expect(both.body.error.message).toContain(a.body.knowledgebase.id)
    expect(both.body.error.message).toContain(b.body.knowledgebase.id)
  })

  it("lists pages and the outline, and searches pages", async () => {
    const pages = await call(member, "list_pages", { knowledgebaseId: kbId, fields: ["id", "title"] })
    expect(pages.body.items).toContainEqual({ id: pageId, title: "Refund policy" })
    expect(pages.body.nextCursor).toBeNull()
    const outline = await call(member, "get_knowledgebase_outline", { knowledgebaseId: "Handbook" })
    expect(outline.body.knowledgebase.pages.map((p: { id: string }) => p.id)).toContain(pageId)
    const found = await call(member, "search_knowledgebase", { knowledgebaseId: "Handbook", query: "refunds", kinds: ["pages"] })
    expect(found.isError).toBe(false)
    expect(found.body.results[0].citation).toMatchObject({ kind: "page", pageId })
  })

  it("refuses bad arguments with invalid_request naming the field", async () => {
    const bad = await call(member, "list_pages", { knowledgebaseId: kbId, updatedSince: "yesterday" })
    expect(bad.body.error).toEqual({ code: "invalid_request", message: expect.stringContaining("updatedSince") })
  })

  it("keeps tenancy: another organization's ids are not_found", async () => {
    await server.createOrganization("elsewhere")
    const outsider = await personalKey(server, "outsider@example.com", "admin", "elsewhere")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization("elsewhere", { enable: ["mcp"] })))
    const client = await connect(server, outsider)
    const read = await call(client, "read_page", { knowledgebaseId: kbId, pageId })
    expect(read.body.error.code).toBe("not_found")
    const byName = await call(client, "list_pages", { knowledgebaseId: "Handbook" })
    expect(byName.body.error.code).toBe("not_found")
    const write = await call(client, "append_page", { knowledgebaseId: kbId, pageId, text: "stolen" })
    expect(write.body.error.code).toBe("not_found")
    await client.close()
    const unchanged = await call(member, "read_page", { knowledgebaseId: kbId, pageId, view: "full" })
    expect(unchanged.body.page.markdown).not.toContain("stolen")
  })
})

describe("writes", () => {
  it("edits with patch, appends, makes folders and moves pages", async () => {
    const edited = await call(member, "save_page", { knowledgebaseId: kbId, pageId, patch: [{ op: "replace", oldString: "30 days", newString: "45 days" }] })
    expect(edited.body.status).toBe("applied")
    const appended = await call(member, "append_page", { knowledgebaseId: kbId, pageId: "Refund policy", text: "\n\nExceptions apply." })
    expect(appended.isError).toBe(false)
    const folder = await call(member, "create_folder", { knowledgebaseId: kbId, title: "Policies" })
    expect(folder.body.page).toMatchObject({ title: "Policies", isFolder: true })
    const moved = await call(member, "move_page", { knowledgebaseId: kbId, pageId, parentPageId: "Policies" })
    expect(moved.body).toMatchObject({ ok: true, page: { id: pageId, parentPageId: folder.body.page.id } })
    const read = await call(member, "read_page", { knowledgebaseId: kbId, pageId, view: "full" })
    expect(read.body.page.markdown).toBe("# Refunds\n\nWithin 45 days.\n\nExceptions apply.")
  })

  it("refuses a patch whose anchor is missing, writing nothing", async () => {
    const refused = await call(member, "save_page", { knowledgebaseId: kbId, pageId, patch: [{ op: "replace", oldString: "never there", newString: "x" }] })
    expect(refused.body.error.code).toBe("invalid_request")
    const read = await call(member, "read_page", { knowledgebaseId: kbId, pageId, view: "full" })
    expect(read.body.page.markdown).toBe("# Refunds\n\nWithin 45 days.\n\nExceptions apply.")
  })

  it("accepts the old tool names and snake_case arguments for one release", async () => {
    const created = await call(member, "create_page", { knowledge_base_id: kbId, title: "Shipping", body_markdown: "We ship worldwide." })
    expect(created.isError).toBe(false)
    const shippingId = created.body.page.id
    const edited = await call(member, "edit_page", { knowledgebase_id: kbId, page_id: shippingId, patch: [{ op: "replace", old_string: "worldwide", new_string: "to the EU" }] })
    expect(edited.body.status).toBe("applied")
    const read = await call(member, "read_page", { knowledgebase_id: kbId, page_id: "Shipping" })
    expect(read.body.page.markdown).toBe("We ship to the EU.")
  })

  it("uploads a source that shows in list_changes as created, then ready", async () => {
    const uploaded = await call(member, "upload_source", { knowledgebaseId: kbId, name: "Prices", contentMarkdown: "# Prices\n\nThe widget costs 12 euros." })
    expect(uploaded.body).toMatchObject({ status: "processing", source: { name: "Prices", createdVia: "mcp" } })
    const sourceId = uploaded.body.source.id
    let changes: Array<{ id: string; change: string }> = []
    for (let attempt = 0; attempt < 100; attempt++) {
      const feed = await call(member, "list_changes", { knowledgebaseId: "Handbook" })
      changes = feed.body.items.filter((entry: { id: string }) => entry.id === sourceId)
      if (changes.some((entry) => entry.change === "ready")) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(changes.map((entry) => entry.change)).toEqual(["created", "ready"])
    const got = await call(member, "get_source", { knowledgebaseId: kbId, sourceId: "Prices" })
    expect(got.body.source).toMatchObject({ id: sourceId, status: "ready" })
    const listed = await call(member, "list_sources", { knowledgebaseId: kbId, fields: ["id", "status"] })
    expect(listed.body.items).toEqual([{ id: sourceId, status: "ready" }])
    const moved = await call(member, "move_source", { knowledgebaseId: kbId, sourceId, parentPageId: "Policies" })
    expect(moved.body).toMatchObject({ ok: true, source: { id: sourceId } })
  })
})

describe("memories", () => {
  it("remembers, lists and forgets the member's own memories only", async () => {
    const kept = await call(member, "remember", { text: "Prefers short answers" })
    expect(kept.body.memory).toMatchObject({ text: "Prefers short answers" })
    const listed = await call(member, "list_memories")
    expect(listed.body).toEqual({ items: [kept.body.memory], nextCursor: null })
    const viewer = await connect(server, viewerKey)
    expect((await call(viewer, "list_memories")).body.items).toEqual([])
    const stolen = await call(viewer, "forget", { memoryId: kept.body.memory.id })
    expect(stolen.body.error.code).toBe("not_found")
    await viewer.close()
    expect((await call(member, "forget", { memoryId: kept.body.memory.id })).body).toEqual({ ok: true, memoryId: kept.body.memory.id })
    expect((await call(member, "list_memories")).body.items).toEqual([])
  })
})

describe("resources", () => {
  it("lists pages as svc:// resources and reads them", async () => {
    const listed = await member.listResources()
    const uri = `svc://knowledgebases/${kbId}/pages/${pageId}`
    expect(listed.resources.map((resource) => resource.uri)).toContain(uri)
    const read = await member.readResource({ uri })
    expect(read.contents[0]).toMatchObject({ uri, mimeType: "text/markdown", text: expect.stringContaining("Within 45 days") })
  })
})

describe("search_docs and activity", () => {
  it("searches the service's own documentation offline", async () => {
    const found = await call(member, "search_docs", { query: "organization keys MCP refused" })
    expect(found.isError).toBe(false)
    expect(found.body.items.length).toBeGreaterThan(0)
    expect(found.body.items[0]).toMatchObject({ file: expect.stringMatching(/\.md$/), heading: expect.any(String) })
  })

  it("keeps each connection's own activity list beside the key's", async () => {
    const client = await connect(server, memberKey)
    const who = await call(client, "whoami")
    await call(client, "read_page", { knowledgebaseId: kbId, pageId })
    await server.flush()
    const keyId = who.body.key.id as string
    const orgId = who.body.organization.id as string
    const mine = await server.admin(Effect.flatMap(ActivityLog, (log) => log.forKey(orgId, keyId, undefined, who.body.connectionId)))
    expect(mine.map((entry) => entry.action)).toEqual(["read_page"])
    expect(mine[0]!.connectionId).toBe(who.body.connectionId)
    const all = await server.admin(Effect.flatMap(ActivityLog, (log) => log.forKey(orgId, keyId)))
    expect(all.length).toBeGreaterThan(1)
    await client.close()
  })
})
