/**
 * The pages feature's MCP tools (the `knowledge` family): the page index, reading a page (a 2 KB
 * summary by default), and creating, editing, appending to, filing and moving pages and folders, over
 * `PageService` as `/knowledgebases/{id}/pages…` calls it (`knowledge:read` / `knowledge:write`),
 * bodies decoded by the same schemas.
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import { InvalidRequest } from "../../platform/errors.js"
import { decodeBody } from "../../platform/request/decode.js"
import { project } from "../../platform/pagination.js"
import { operation } from "../../mcp-door/operation.js"
import { itemsOf, restBodyWith } from "../../mcp-door/output.js"
import { listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { decodeUpdatedSince, fieldsInput, updatedSinceInput } from "../../mcp-door/shared-arguments.js"
import { fieldsList, idOrName, tool } from "../../mcp-door/tool.js"
import { knowledgebaseIdOf, knowledgebaseInput, pageIdOf, parentInput, parentPageIdOf, parentReason } from "../mcp-ids.js"
import { PagesApi } from "./api.js"
import { CreatePage, PatchPage, pageIndexFields } from "./domain.js"
import { PageService } from "./service.js"

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

const listPagesOperation = operation(PagesApi, "list")
const createPageOperation = operation(PagesApi, "create")
const patchPageOperation = operation(PagesApi, "update")
const appendOperation = operation(PagesApi, "append")

/** Why `view` is the tool's own: REST answers a page whole; the 2 KB summary is MCP's (spec: Limits). */
const viewReason = "MCP's summary view of a page (its first 2 KB); REST answers the whole page"

/** What `read_page` adds to REST's `{page}`: whether the markdown was cut to its summary, and how to read it whole. */
const PreviewFields = Schema.Struct({ truncated: Schema.Boolean, totalBytes: Schema.optional(Schema.Number), hint: Schema.optional(Schema.String) })

const viewInput = z.enum(["summary", "full"]).optional().describe("`summary` (default) or `full`.")

/** Patch operations, as `PATCH /knowledgebases/{id}/pages/{pageId}` takes them (its schema's shape and bounds). */
const patchInput = operationArgument(patchPageOperation, "patch")
  .optional()
  .describe("Edits of an existing page, applied in order; each anchor must occur exactly once.")

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

const savePage = tool({
  name: "save_page",
  title: "Create or edit a page",
  description:
    "Without `pageId`, create a page (`title`, `bodyMarkdown`, optional `parentPageId`). With `pageId`, edit it: `patch` operations and/or `description`. Answers `applied`, or `pending_review` when the organization reviews agent writes.",
  input: {
    knowledgebaseId: knowledgebaseInput,
    pageId: z.string().min(1).optional().describe("The page to edit (id or exact title); absent to create one."),
    title: operationArgument(createPageOperation, "title").optional().describe("The new page's title (required to create)."),
    bodyMarkdown: operationArgument(createPageOperation, "bodyMarkdown").optional().describe("The new page's markdown (under 256 KB)."),
    description: operationArgument(patchPageOperation, "description").optional(),
    parentPageId: parentInput,
    patch: patchInput
  },
  operation: [createPageOperation, patchPageOperation],
  ownArguments: { knowledgebaseId: idOrName, pageId: `${idOrName} (absent: a page is created)`, parentPageId: parentReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const pages = yield* PageService
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      if (args.pageId === undefined) {
        if (args.patch !== undefined) return yield* new InvalidRequest({ message: "patch: give pageId to edit a page; without it a page is created." })
        const parentPageId = yield* parentPageIdOf(principal, id, args.parentPageId)
        const input = yield* decodeBody(CreatePage)({
          title: args.title,
          ...(args.bodyMarkdown === undefined ? {} : { bodyMarkdown: args.bodyMarkdown }),
          ...(args.description === undefined ? {} : { description: args.description }),
          ...(parentPageId === undefined ? {} : { parentPageId })
        })
        return yield* pages.create(principal, id, input)
      }
      const stray = (["title", "bodyMarkdown", "parentPageId"] as const).filter((name) => args[name] !== undefined)
      if (stray.length > 0) {
        return yield* new InvalidRequest({
          message: `${stray.join(", ")}: an existing page is edited with patch operations and description (move_page files it elsewhere).`
        })
      }
      const pageId = yield* pageIdOf(principal, id, args.pageId)
      const input = yield* decodeBody(PatchPage)({
        ...(args.patch === undefined ? {} : { patch: args.patch }),
        ...(args.description === undefined ? {} : { description: args.description })
      })
      return yield* pages.patch(principal, id, pageId, input)
    })
})

const appendPage = tool({
  name: "append_page",
  description: "Append markdown to the end of a page.",
  input: {
    knowledgebaseId: knowledgebaseInput,
    pageId: z.string().min(1).describe("The page's id or exact title."),
    text: operationArgument(appendOperation, "text")
  },
  operation: appendOperation,
  ownArguments: { knowledgebaseId: idOrName, pageId: idOrName },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const pageId = yield* pageIdOf(principal, id, args.pageId)
      return yield* (yield* PageService).append(principal, id, pageId, args.text)
    })
})

const createFolder = tool({
  name: "create_folder",
  title: "Create a folder",
  description: "Create a folder (a page without a body that holds pages and documents).",
  input: {
    knowledgebaseId: knowledgebaseInput,
    title: operationArgument(createPageOperation, "title"),
    description: operationArgument(createPageOperation, "description").optional(),
    parentPageId: parentInput
  },
  operation: createPageOperation,
  ownArguments: { knowledgebaseId: idOrName, parentPageId: parentReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const parentPageId = yield* parentPageIdOf(principal, id, args.parentPageId)
      const input = yield* decodeBody(CreatePage)({
        title: args.title,
        templateKey: "folder",
        ...(args.description === undefined ? {} : { description: args.description }),
        ...(parentPageId === undefined ? {} : { parentPageId })
      })
      return yield* (yield* PageService).create(principal, id, input)
    })
})

const movePage = tool({
  name: "move_page",
  description: "File a page or folder under another page or folder of the same Knowledgebase, or at the top level (`parentPageId: null`).",
  input: {
    knowledgebaseId: knowledgebaseInput,
    pageId: z.string().min(1).describe("The page's id or exact title."),
    parentPageId: z.string().min(1).nullable().describe("The new parent (id or exact title), or null for the top level.")
  },
  operation: operation(PagesApi, "move"),
  ownArguments: { knowledgebaseId: idOrName, pageId: idOrName, parentPageId: parentReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const pageId = yield* pageIdOf(principal, id, args.pageId)
      const parent = yield* parentPageIdOf(principal, id, args.parentPageId)
      return { ok: true, page: yield* (yield* PageService).move(principal, id, pageId, parent ?? null) }
    })
})

/** The page tools. */
export const pageTools = [listPages, readPage, savePage, appendPage, createFolder, movePage] as const
