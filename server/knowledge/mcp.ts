/**
 * The Knowledgebases feature's MCP tools (the `knowledge` family): listing, reading the outline of,
 * creating and searching Knowledgebases, and the changes feed, over the services
 * `/knowledgebases…` calls (`knowledge:read` / `knowledge:write`), with the same cursors, activity
 * and credits. Lists answer `{items, nextCursor}`.
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import { decodeBody } from "../platform/request/decode.js"
import { operation } from "../mcp-door/operation.js"
import { itemsOf, restBodyWith } from "../mcp-door/output.js"
import { listArguments, operationArgument } from "../mcp-door/operation-arguments.js"
import { decodeUpdatedSince, fieldsInput } from "../mcp-door/shared-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../mcp-door/tool.js"
import { KnowledgeApi } from "./api.js"
import { ChangeFeed } from "./changes/service.js"
import { CreateKnowledgebase, knowledgebaseFields } from "./knowledgebases/domain.js"
import { knowledgebaseIdOf, knowledgebaseInput, knowledgebaseOrAllIdOf } from "./mcp-ids.js"
import { SearchRequest } from "./search/domain.js"
import { SearchService } from "./search/service.js"
import { KnowledgebaseService } from "./service.js"

/** What a create adds to REST's body: `created`, always true here. */
const Created = Schema.Struct({ created: Schema.Literal(true) })

const listKnowledgebasesOperation = operation(KnowledgeApi, "list")
const searchOperation = operation(KnowledgeApi, "search")
const changesOperation = operation(KnowledgeApi, "changes")
const createKnowledgebaseOperation = operation(KnowledgeApi, "create")

/** Why `view` is the tool's own: REST answers a page whole; the 2 KB summary is MCP's (spec: Limits). */
const viewReason = "MCP's summary view of a page (its first 2 KB); REST answers the whole page"
/** Why an `all`-or-name Knowledgebase argument is the tool's own. */
const orAllReason = `${idOrName}, or \`all\``

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

/** The Knowledgebase tools. */
export const knowledgebaseTools = [listKnowledgebases, outline, search, listChanges, createKnowledgebase] as const
