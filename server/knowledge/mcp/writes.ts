/**
 * Knowledgebase writes (`knowledge:write`, member role and above): the same services and checks as
 * the REST writes (plan caps, review, body limits, anchors), bodies decoded by the same schemas.
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import { InvalidRequest } from "../../platform/errors.js"
import { decodeBody } from "../../platform/request/decode.js"
import { CreateKnowledgebase } from "../knowledgebases/domain.js"
import { CreatePage, PatchPage } from "../pages/domain.js"
import { PageService } from "../pages/service.js"
import { CreateSourceJson } from "../sources/domain.js"
import { SourceService } from "../sources/service.js"
import { KnowledgebaseService } from "../service.js"
import { KnowledgeApi } from "../api.js"
import { PagesApi } from "../pages/api.js"
import { SourcesApi } from "../sources/api.js"
import { operation } from "../../mcp-door/operation.js"
import { restBodyWith } from "../../mcp-door/output.js"
import { operationArgument } from "../../mcp-door/operation-arguments.js"
import { idOrName, tool } from "../../mcp-door/tool.js"
import { knowledgebaseIdOf, knowledgebaseInput, pageIdOf, parentPageIdOf, sourceIdOf } from "./ids.js"

/** What a create adds to REST's body: `created`, always true here. */
const Created = Schema.Struct({ created: Schema.Literal(true) })

const createKnowledgebaseOperation = operation(KnowledgeApi, "create")
const createPageOperation = operation(PagesApi, "create")
const patchPageOperation = operation(PagesApi, "update")
const appendOperation = operation(PagesApi, "append")
const createSourceOperation = operation(SourcesApi, "create")

/** Why a parent argument is the tool's own. */
const parentReason = `${idOrName}; null for the top level`

const parentInput = z
  .string()
  .min(1)
  .nullable()
  .optional()
  .describe("A page or folder of this Knowledgebase (id or exact title); null or absent for the top level.")

/** Patch operations, as `PATCH /knowledgebases/{id}/pages/{pageId}` takes them (its schema's shape and bounds). */
const patchInput = operationArgument(patchPageOperation, "patch")
  .optional()
  .describe("Edits of an existing page, applied in order; each anchor must occur exactly once.")

const createKnowledgebase = tool({
  name: "create_knowledgebase",
  description: "Create a Knowledgebase (within the plan's cap).",
  input: {
    name: operationArgument(createKnowledgebaseOperation, "name").describe("1 to 200 characters."),
    description: operationArgument(createKnowledgebaseOperation, "description").optional()
  },
  operation: createKnowledgebaseOperation,
  output: restBodyWith(Created),
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const input = yield* decodeBody(CreateKnowledgebase)(args)
      return { knowledgebase: yield* (yield* KnowledgebaseService).create(principal, input), created: true }
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

const uploadSource = tool({
  name: "upload_source",
  description:
    "Add a document to a Knowledgebase: inline markdown or text (up to 1 MB), or a public `url`. It is indexed in the background: `list_changes` shows it `created`, then `ready` (or `failed`).",
  input: {
    knowledgebaseId: knowledgebaseInput,
    name: operationArgument(createSourceOperation, "name"),
    contentMarkdown: operationArgument(createSourceOperation, "contentMarkdown").optional().describe("Markdown, up to 1 MB."),
    contentText: operationArgument(createSourceOperation, "contentText").optional().describe("Plain text, up to 1 MB."),
    url: operationArgument(createSourceOperation, "url").optional().describe("A public http(s) address to fetch."),
    parentPageId: parentInput
  },
  operation: createSourceOperation,
  ownArguments: { knowledgebaseId: idOrName, parentPageId: parentReason },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const sources = yield* SourceService
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const parentPageId = yield* parentPageIdOf(principal, id, args.parentPageId)
      const { knowledgebaseId: _, ...rest } = args
      const body = yield* decodeBody(CreateSourceJson)({ ...rest, ...(parentPageId === undefined ? {} : { parentPageId }) })
      const prepared = yield* sources.prepare(principal, id, yield* sources.fromJson(body, "mcp"))
      const written = yield* sources.write(principal, prepared)
      yield* sources.wakeWorker
      return written
    })
})

const moveSource = tool({
  name: "move_source",
  description: "File a document under a page or folder of its Knowledgebase, or unfile it (`parentPageId: null`).",
  input: {
    knowledgebaseId: knowledgebaseInput,
    sourceId: z.string().min(1).describe("The source's id or exact name."),
    parentPageId: z.string().min(1).nullable().describe("A page or folder (id or exact title), or null to unfile.")
  },
  operation: operation(SourcesApi, "move"),
  ownArguments: { knowledgebaseId: idOrName, sourceId: idOrName, parentPageId: `${idOrName}; null unfiles` },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* knowledgebaseIdOf(principal, args.knowledgebaseId)
      const sourceId = yield* sourceIdOf(principal, id, args.sourceId)
      const parent = yield* parentPageIdOf(principal, id, args.parentPageId)
      return { ok: true, source: yield* (yield* SourceService).move(principal, id, sourceId, parent ?? null) }
    })
})

/** The knowledge family's write tools. */
export const knowledgeWriteTools = [createKnowledgebase, savePage, appendPage, uploadSource, moveSource, createFolder, movePage] as const
