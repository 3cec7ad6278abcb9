/**
 * `resource_link` content (issue 23) through the MCP SDK's client: a tool result that names pages or
 * sources carries one link to each after its JSON text (folders excepted), each one `resources/read`
 * reads; `structuredContent` stays the answer as it was; results naming neither carry the text alone.
 * Where the links sit is read from each tool's output schema, so every tool answering pages or
 * sources links them (`expectedLinkers` below is what the schemas give, checked against the registry).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult, ResourceLink } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { linkSites, resourceLinks, resourceLinksMax } from "../../server/mcp-door/resource-links.js"
import { pageUri, sourceUri } from "../../server/mcp-door/resource-uris.js"
import { createFolder, createPage } from "../support/knowledge.js"
import { connect, personalKey } from "../support/mcp.js"
import { everyTool } from "../support/mcp-tools.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let member: Client
let kbId: string
let refundId: string
let returnsId: string
let folderId: string
let sourceId: string

/** Calls a tool and answers its result: its JSON text parsed, its links and its structured content. */
const linked = async (name: string, args: Record<string, unknown>) => {
  const result = (await member.callTool({ name, arguments: args })) as CallToolResult
  expect(result.isError ?? false).toBe(false)
  const [first, ...rest] = result.content
  expect(first?.type).toBe("text")
  expect(JSON.parse((first as { text: string }).text)).toEqual(result.structuredContent)
  expect(rest.every((part) => part.type === "resource_link")).toBe(true)
  return { body: result.structuredContent as any, links: rest as Array<ResourceLink> }
}

const pageLink = (pageId: string, name: string, description?: string) => ({
  type: "resource_link",
  uri: pageUri(kbId, pageId),
  name,
  mimeType: "text/markdown",
  ...(description === undefined ? {} : { description })
})
const sourceLink = () => ({ type: "resource_link", uri: sourceUri(kbId, sourceId), name: "Price list", mimeType: "application/json" })

beforeAll(async () => {
  server = await startTestServer()
  member = await connect(server, await personalKey(server, "member@example.com", "member"), { tools: "knowledge" })
  kbId = (await server.request("POST", "/knowledgebases", { body: { name: "Handbook" } })).body.knowledgebase.id
  folderId = await createFolder(server, kbId, "Policies")
  refundId = await createPage(server, kbId, { title: "Refund policy", bodyMarkdown: "# Refunds\n\nWithin 30 days.", description: "Money back", parentPageId: folderId })
  returnsId = await createPage(server, kbId, { title: "Returns", bodyMarkdown: "Send it back within 30 days." })
  const upload = await server.request("POST", `/knowledgebases/${kbId}/sources`, { body: { name: "Price list", contentMarkdown: "# Prices\n\nTen euros." } })
  expect(upload.status).toBe(202)
  sourceId = upload.body.source.id
})
afterAll(async () => {
  await member.close()
  await server.stop()
})

describe("resource links", () => {
  it("follow read_page's text with a link to the page, which resources/read reads", async () => {
    const { body, links } = await linked("read_page", { knowledgebaseId: "Handbook", pageId: "Refund policy" })
    expect(body.page.id).toBe(refundId)
    expect(links).toEqual([pageLink(refundId, "Refund policy", "Money back")])
    const read = await member.readResource({ uri: links[0]!.uri })
    expect(read.contents).toEqual([{ uri: links[0]!.uri, mimeType: "text/markdown", text: "# Refunds\n\nWithin 30 days." }])
  })

  it("link every page of list_pages but no folder, the Knowledgebase taken from the argument's name; fields cut nothing of them", async () => {
    const { body, links } = await linked("list_pages", { knowledgebaseId: "Handbook" })
    expect(body.items.map((item: any) => item.id).sort()).toEqual([folderId, refundId, returnsId].sort())
    expect(links.map((link) => link.uri).sort()).toEqual([pageUri(kbId, refundId), pageUri(kbId, returnsId)].sort())
    const narrowed = await linked("list_pages", { knowledgebaseId: kbId, fields: ["id"] })
    expect(narrowed.body.items.every((item: any) => Object.keys(item).join() === "id")).toBe(true)
    expect(narrowed.links.map((link) => link.uri).sort()).toEqual([folderId, refundId, returnsId].map((id) => pageUri(kbId, id)).sort())
  })

  it("link the source of list_sources, get_source and move_source, read as get_source answers it", async () => {
    expect((await linked("list_sources", { knowledgebaseId: "Handbook" })).links).toEqual([sourceLink()])
    const got = await linked("get_source", { knowledgebaseId: "Handbook", sourceId: "Price list" })
    expect(got.links).toEqual([sourceLink()])
    const read = await member.readResource({ uri: sourceUri(kbId, sourceId) })
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual({ source: { ...got.body.source, updatedAt: expect.any(String), status: expect.any(String), searchable: expect.any(Boolean) } })
    expect((await linked("move_source", { knowledgebaseId: kbId, sourceId, parentPageId: null })).links).toEqual([sourceLink()])
  })

  it("link the pages and sources of the outline, of a search's citations and of a page write", async () => {
    const outline = await linked("get_knowledgebase_outline", { knowledgebaseId: "Handbook" })
    expect(outline.links.map((link) => link.uri).sort()).toEqual([pageUri(kbId, refundId), pageUri(kbId, returnsId), sourceUri(kbId, sourceId)].sort())
    const search = await linked("search_knowledgebase", { knowledgebaseId: "all", query: "30 days", kinds: ["pages"] })
    expect(search.body.results.map((hit: any) => hit.citation.pageId).sort()).toEqual([refundId, returnsId].sort())
    expect(search.links.map((link) => link.uri).sort()).toEqual([pageUri(kbId, refundId), pageUri(kbId, returnsId)].sort())
    const saved = await linked("save_page", { knowledgebaseId: kbId, title: "Warranty", bodyMarkdown: "Two years." })
    expect(saved.links).toEqual([pageLink(saved.body.page.id, "Warranty")])
    expect((await linked("create_folder", { knowledgebaseId: kbId, title: "Archive" })).links).toEqual([])
  })

  it("leave the results that name no page or source as their text alone", async () => {
    expect((await linked("list_knowledgebases", {})).links).toEqual([])
    expect((await linked("whoami", {})).links).toEqual([])
  })

  it("sit where each tool's output schema puts pages, sources and citations: the tools answering them, and no other", async () => {
    const linkers = (await everyTool()).filter((tool) => linkSites(tool.outputSchema).length > 0).map((tool) => tool.name).sort()
    expect(linkers).toEqual(
      ["append_page", "get_execution", "get_knowledgebase_outline", "get_source", "list_pages", "list_sources", "move_page", "move_source", "read_page", "save_page", "create_folder", "search_knowledgebase", "upload_source"].sort()
    )
  })

  it("link a document hit to its source, a memory hit to nothing, and stop at the most links a result carries", async () => {
    const search = (await everyTool()).find((tool) => tool.name === "search_knowledgebase")!
    const citation = { kind: "document", knowledgebaseId: kbId, sourceId, sourceName: "Price list", passageId: "p1" }
    const memory = { kind: "memory", knowledgebaseId: null, memoryId: "00000000-0000-4000-8000-000000000009" }
    const answer = { results: [{ kind: "document", id: "p1", title: "Price list", snippet: "", score: 1, citation }, { kind: "memory", id: "m", title: "", snippet: "", score: 1, citation: memory }] }
    expect(resourceLinks(search.outputSchema, answer, new Map())).toEqual([sourceLink()])
    const listPages = (await everyTool()).find((tool) => tool.name === "list_pages")!
    const many = { items: Array.from({ length: resourceLinksMax + 5 }, (_, i) => ({ id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, title: `P${i}`, templateKey: "page" })) }
    const links = resourceLinks(listPages.outputSchema, many, new Map([["knowledgebaseId", new Set([kbId])]]))
    expect(links).toHaveLength(resourceLinksMax)
    // Without the Knowledgebase (two resolved, or none) a page of an index is not linked.
    expect(resourceLinks(listPages.outputSchema, many, new Map([["knowledgebaseId", new Set([kbId, "other"])]]))).toEqual([])
  })
})
