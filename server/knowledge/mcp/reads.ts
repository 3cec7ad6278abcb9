/**
 * Knowledgebase reads and polling (`knowledge:read`): the same services, cursors, activity and
 * credits as `GET /knowledgebases…` and `POST /knowledgebases/{id}/search`. Lists answer
 * `{items, nextCursor}`.
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import { decodeBody } from "../../platform/request/decode.js"
import { project } from "../../platform/pagination.js"
import { ChangeFeed } from "../changes/service.js"
import { knowledgebaseFields } from "../knowledgebases/domain.js"
import { pageIndexFields } from "../pages/domain.js"
import { PageService } from "../pages/service.js"
import { SearchRequest } from "../search/domain.js"
import { SearchService } from "../search/service.js"
import { sourceFields } from "../sources/domain.js"
import { SourceService } from "../sources/service.js"
import { KnowledgebaseService } from "../service.js"
import { KnowledgeApi } from "../api.js"
import { PagesApi } from "../pages/api.js"
import { SourcesApi } from "../sources/api.js"
import { operation } from "../../mcp-door/operation.js"
import { itemsOf, restBodyWith } from "../../mcp-door/output.js"
import { listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../../mcp-door/tool.js"
import { knowledgebaseIdOf, knowledgebaseInput, knowledgebaseOrAllIdOf, pageIdOf, sourceIdOf } from "./ids.js"
import { decodeUpdatedSince, fieldsInput, updatedSinceInput } from "../../mcp-door/shared-arguments.js"

/** The `read_page` preview in summary view: 2 KB of markdown (spec: Limits). */
export const pagePreviewBytes = 2048

/** The first `bytes` of `text` in UTF-8, cut at a character boundary. */
export const previewOf = (text: string, bytes = pagePreviewBytes): { text: string; truncated: boolean } => {
  const encoded = Buffer.from(text, "utf8")
  if (encoded.byteLength <= bytes) return { text, truncated: false }
  let end = bytes
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end--
  return { text: encoded.subarray(0, end).toString("utf8"), truncated: true }
}

const listKnowledgebasesOperation = operation(KnowledgeApi, "list")
const searchOperation = operation(KnowledgeApi, "search")
const changesOperation = operation(KnowledgeApi, "changes")
const listPagesOperation = operation(PagesApi, "list")
const listSourcesOperation = operation(SourcesApi, "list")

/** Why `view` is the tool's own: REST answers a page whole; the 2 KB summary is MCP's (spec: Limits). */
const viewReason = "MCP's summary view of a page (its first 2 KB); REST answers the whole page"
/** Why an `all`-or-name Knowledgebase argument is the tool's own. */
const orAllReason = `${idOrName}, or \`all\``

/** What `read_page` adds to REST's `{page}`: whether the markdown was cut to its summary, and how to read it whole. */
const PreviewFields = Schema.Struct({ truncated: Schema.Boolean, totalBytes: Schema.optional(Schema.Number), hint: Schema.optional(Schema.String) })

const viewInput = z.enum(["summary", "full"]).optional().describe("`summary` (default) or `full`.")

const listKnowledgebases = tool({
  name: "list_knowledgebases",
  description: "List the organization's Knowledgebases with their source and page counts, oldest first.",
  input: { ...listArguments(listKnowledgebasesOperation), fields: fieldsInput(knowledgebaseFields) },
  operation: listKnowledgebasesOperation,
  output: itemsOf(),
  ownArguments: { fields: fieldsList },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const page = yield* (yield* KnowledgebaseService).list(principal, { limit: args.limit, cursor: args.cursor })
      return itemsPage(page, args.fields)
    })
})

const outline = tool({
  name: "get_knowledgebase_outline",
  description: "A Knowledgebase with its page tree (titles, folders, paths) and its sources: where to look before reading.",
  input: { knowledgebaseId: knowledgebaseInput },
  operation: operation(KnowledgeApi, "get"),
  ownArguments: { knowledgebaseId: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      return { knowledgebase: yield* (yield* KnowledgebaseService).get(principal, id) }
    })
})

const search = tool({
  name: "search_knowledgebase",
  description:
    "Search a Knowledgebase (or `all`): documents, pages and, for your own key, your memories. Every hit carries a citation. One credit per search that includes documents; pages only is free.",
  input: {
    knowledgebaseId: z.string().min(1).describe("The Knowledgebase's id or exact name, or `all`."),
    query: operationArgument(searchOperation, "query").describe("What to look for, 1 to 1000 characters."),
    kinds: operationArgument(searchOperation, "kinds").optional().describe("What to search (default: documents and pages)."),
    ...listArguments(searchOperation)
  },
  operation: searchOperation,
  ownArguments: { knowledgebaseId: orAllReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseOrAllIdOf(principal, args.knowledgebaseId)
      const { knowledgebaseId: _, ...body } = args
      const request = yield* decodeBody(SearchRequest)(body)
      return yield* (yield* SearchService).search(principal, id, request)
    })
})

const listPages = tool({
  name: "list_pages",
  description:
    "The page index of a Knowledgebase: pages and folders with paths and hooks. With `parentPageId`, only what is under it (and the files filed there).",
  input: {
    knowledgebaseId: knowledgebaseInput,
    parentPageId: z.string().min(1).optional().describe("A page or folder (id or exact title), or `null` for the top level."),
    depth: operationArgument(listPagesOperation, "depth").optional().describe("Levels below the parent, 1 to 20."),
    updatedSince: updatedSinceInput(listPagesOperation),
    ...listArguments(listPagesOperation),
    fields: fieldsInput(pageIndexFields)
  },
  operation: listPagesOperation,
  output: itemsOf({ keep: ["parent", "files"] }),
  ownArguments: { knowledgebaseId: idOrName, parentPageId: `${idOrName}, or \`null\` for the top level`, fields: fieldsList },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const parentPageId =
        args.parentPageId === undefined || args.parentPageId === "null" ? args.parentPageId : yield* pageIdOf(principal, id, args.parentPageId, "parentPageId")
      const index = yield* (yield* PageService).index(principal, id, {
        parentPageId,
        depth: args.depth,
        updatedSince: yield* decodeUpdatedSince(args.updatedSince),
        limit: args.limit,
        cursor: args.cursor
      })
      return {
        items: index.items.map((item) => project(item, args.fields ?? null)),
        nextCursor: index.nextCursor,
        parent: index.parent,
        ...(index.files === undefined ? {} : { files: index.files })
      }
    })
})

const readPage = tool({
  name: "read_page",
  description: `Read a page: its markdown (the first ${pagePreviewBytes} bytes in the default summary view; \`view: "full"\` for all), links, children and attached files.`,
  input: {
    knowledgebaseId: knowledgebaseInput,
    pageId: z.string().min(1).describe("The page's id or exact title."),
    view: viewInput
  },
  operation: operation(PagesApi, "get"),
  output: restBodyWith(PreviewFields),
  ownArguments: { knowledgebaseId: idOrName, pageId: idOrName, view: viewReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const pageId = yield* pageIdOf(principal, id, args.pageId)
      const page = yield* (yield* PageService).get(principal, id, pageId)
      if (args.view === "full") return { page, truncated: false }
      const preview = previewOf(page.markdown)
      return {
        page: { ...page, markdown: preview.text },
        truncated: preview.truncated,
        ...(preview.truncated ? { totalBytes: Buffer.byteLength(page.markdown), hint: 'Call again with view: "full" for the whole page.' } : {})
      }
    })
})

const listSources = tool({
  name: "list_sources",
  description: "The documents (sources) of a Knowledgebase with their status (`processing`, `ready`, `failed`, …), oldest first.",
  input: {
    knowledgebaseId: knowledgebaseInput,
    updatedSince: updatedSinceInput(listSourcesOperation),
    ...listArguments(listSourcesOperation),
    fields: fieldsInput(sourceFields)
  },
  operation: listSourcesOperation,
  output: itemsOf(),
  ownArguments: { knowledgebaseId: idOrName, fields: fieldsList },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const page = yield* (yield* SourceService).list(principal, id, {
        limit: args.limit,
        cursor: args.cursor,
        updatedSince: yield* decodeUpdatedSince(args.updatedSince)
      })
      return itemsPage(page, args.fields)
    })
})

const getSource = tool({
  name: "get_source",
  description: "One document (source) of a Knowledgebase: status, type, size, where it is filed.",
  input: { knowledgebaseId: knowledgebaseInput, sourceId: z.string().min(1).describe("The source's id or exact name.") },
  operation: operation(SourcesApi, "get"),
  ownArguments: { knowledgebaseId: idOrName, sourceId: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const sourceId = yield* sourceIdOf(principal, id, args.sourceId)
      return { source: yield* (yield* SourceService).get(principal, id, sourceId) }
    })
})

const listChanges = tool({
  name: "list_changes",
  description:
    "The changes feed of a Knowledgebase (or `all`): one entry per change of a page, folder or source (an upload shows `created`, then `ready`), oldest first. Poll with `tailCursor`. Free.",
  input: {
    knowledgebaseId: z.string().min(1).describe("The Knowledgebase's id or exact name, or `all`."),
    since: operationArgument(changesOperation, "since").optional().describe("ISO 8601 date-time to start from (instead of `cursor`)."),
    ...listArguments(changesOperation)
  },
  operation: changesOperation,
  output: itemsOf({ keep: ["tailCursor"] }),
  ownArguments: { knowledgebaseId: orAllReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseOrAllIdOf(principal, args.knowledgebaseId)
      const since = yield* decodeUpdatedSince(args.since)
      const page = yield* (yield* ChangeFeed).feed(principal, id, { since, limit: args.limit, cursor: args.cursor })
      return { items: page.items, nextCursor: page.nextCursor, tailCursor: page.tailCursor }
    })
})

/** The knowledge family's read tools. */
export const knowledgeReadTools = [listKnowledgebases, outline, search, listPages, readPage, listSources, getSource, listChanges] as const
