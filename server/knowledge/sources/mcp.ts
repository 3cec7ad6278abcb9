/**
 * The sources feature's MCP tools (the `knowledge` family): listing, reading, uploading and filing
 * documents, over `SourceService` as `/knowledgebases/{id}/sources…` calls it (`knowledge:read` /
 * `knowledge:write`), bodies decoded by the same schemas.
 */
import { Effect } from "effect"
import * as z from "zod/v4"
import { decodeBody } from "../../platform/request/decode.js"
import { operation } from "../../mcp-door/operation.js"
import { itemsOf } from "../../mcp-door/output.js"
import { listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { decodeUpdatedSince, fieldsInput, updatedSinceInput } from "../../mcp-door/shared-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../../mcp-door/tool.js"
import { knowledgebaseIdOf, knowledgebaseInput, parentInput, parentPageIdOf, parentReason, sourceIdOf } from "../mcp-ids.js"
import { SourcesApi } from "./api.js"
import { CreateSourceJson, sourceFields } from "./domain.js"
import { SourceService } from "./service.js"

const listSourcesOperation = operation(SourcesApi, "list")
const createSourceOperation = operation(SourcesApi, "create")

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

/** The source tools. */
export const sourceTools = [listSources, getSource, uploadSource, moveSource] as const
