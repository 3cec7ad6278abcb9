/**
 * The Knowledgebase resources (conventions: MCP): pages, `svc://knowledgebases/<id>/pages/<page-id>`,
 * listed from the page indexes of the caller's Knowledgebases and read in full as markdown through
 * the same service as `read_page`; and sources (documents), `…/sources/<source-id>`, read as REST's
 * `{source}` through the same service as `get_source` (file bodies are never answered) and not
 * listed. Both come with the knowledge family. Their variables complete to the ids of the
 * Knowledgebases, pages and sources the caller may read, through the same services' lists.
 */
import { Effect } from "effect"
import { pageSize } from "../platform/pagination.js"
import { PageService } from "../knowledge/pages/service.js"
import { SourceService } from "../knowledge/sources/service.js"
import { KnowledgebaseService } from "../knowledge/service.js"
import { knowledgebaseIdOf } from "../knowledge/mcp-ids.js"
import { PagesApi } from "../knowledge/pages/api.js"
import { SourcesApi } from "../knowledge/sources/api.js"
import { operation } from "../mcp-door/operation.js"
import { collectAll } from "../mcp-door/resolve.js"
import { pageTemplate, pageUri, sourceTemplate } from "../mcp-door/resource-uris.js"
import type { CallContext } from "../mcp-door/tool.js"
import { completing, type ListedResource, type ResourceKind, type TemplateValues, valueOf, type VariableCompletion } from "./resource-kind.js"

/** The most page resources listed. */
export const listedPagesMax = 1000

/** A page resource mirrors `GET /knowledgebases/{id}/pages/{pageId}`: its scope and gate admit a reader. */
export const pageReadOperation = operation(PagesApi, "get")

const knowledgebasesOf = (call: CallContext) =>
  collectAll((cursor) => Effect.flatMap(KnowledgebaseService, (kbs) => kbs.list(call.principal, { limit: pageSize.max, cursor })))

/** The page resources the caller may read (folders are not resources). */
const pageResources = (call: CallContext) =>
  Effect.gen(function* () {
    const knowledgebases = yield* knowledgebasesOf(call)
    const pages = yield* PageService
    const listed: Array<ListedResource> = []
    for (const kb of knowledgebases) {
      if (listed.length >= listedPagesMax) break
      const items = yield* collectAll((cursor) => pages.index(call.principal, kb.id, { limit: pageSize.max, cursor }))
      for (const item of items) {
        if (item.isFolder) continue
        listed.push({ uri: pageUri(kb.id, item.id), name: item.title, title: `${kb.name} / ${item.path.join(" / ")}`, mimeType: "text/markdown", description: item.description })
      }
    }
    return listed.slice(0, listedPagesMax)
  }).pipe(Effect.catchAll(() => Effect.succeed([])))

/** The Knowledgebases the caller may read, by id, name prefix or name. */
const completeKnowledgebase: VariableCompletion = (call, value) => completing(value, knowledgebasesOf(call))

/** The Knowledgebase a completion's other arguments name (an id, or an exact name), or a failure when none. */
const knowledgebaseNamed = (call: CallContext, others: TemplateValues) => knowledgebaseIdOf(call.principal, valueOf(others, "knowledgebaseId") || "-")

/** The pages (not folders) of the Knowledgebase named beside, by id, title prefix or title. */
const completePage: VariableCompletion = (call, value, others) =>
  completing(
    value,
    Effect.gen(function* () {
      const id = yield* knowledgebaseNamed(call, others)
      const pages = yield* PageService
      const items = yield* collectAll((cursor) => pages.index(call.principal, id, { limit: pageSize.max, cursor }))
      return items.filter((item) => !item.isFolder).map((item) => ({ id: item.id, name: item.title }))
    })
  )

/** The sources of the Knowledgebase named beside, by id, name prefix or name. */
const completeSource: VariableCompletion = (call, value, others) =>
  completing(
    value,
    Effect.gen(function* () {
      const id = yield* knowledgebaseNamed(call, others)
      const sources = yield* SourceService
      const items = yield* collectAll((cursor) => sources.list(call.principal, id, { limit: pageSize.max, cursor }))
      return items.map((item) => ({ id: item.id, name: item.name }))
    })
  )

/** Pages as resources. */
export const pageResourceKind: ResourceKind = {
  name: "page",
  template: pageTemplate,
  title: "Knowledgebase page",
  description: "A page of a Knowledgebase, as markdown.",
  mimeType: "text/markdown",
  operation: pageReadOperation,
  families: ["knowledge"],
  list: pageResources,
  read: (call, values) =>
    Effect.map(
      Effect.flatMap(PageService, (pages) => pages.get(call.principal, valueOf(values, "knowledgebaseId"), valueOf(values, "pageId"))),
      (page) => page.markdown
    ),
  complete: { knowledgebaseId: completeKnowledgebase, pageId: completePage }
}

/** Sources as resources: REST's `{source}`, as `get_source` answers it. */
export const sourceResourceKind: ResourceKind = {
  name: "source",
  template: sourceTemplate,
  title: "Knowledgebase source",
  description: "A document of a Knowledgebase: its status, type, size and where it is filed, as JSON (`{source}`); its content is reached by search.",
  mimeType: "application/json",
  operation: operation(SourcesApi, "get"),
  families: ["knowledge"],
  read: (call, values) =>
    Effect.map(
      Effect.flatMap(SourceService, (sources) => sources.get(call.principal, valueOf(values, "knowledgebaseId"), valueOf(values, "sourceId"))),
      (source) => JSON.stringify({ source })
    ),
  complete: { knowledgebaseId: completeKnowledgebase, sourceId: completeSource }
}
