/**
 * Pages as MCP resources, `svc://knowledgebases/<id>/pages/<page-id>` (conventions: MCP): listed
 * from the page indexes of the caller's Knowledgebases (when the knowledge family is selected and
 * the caller may read), read in full through the same service as `read_page`.
 */
import { Effect } from "effect"
import { NotFound } from "../platform/errors.js"
import { pageSize } from "../platform/pagination.js"
import { PageService } from "../knowledge/pages/service.js"
import { KnowledgebaseService } from "../knowledge/service.js"
import { PagesApi } from "../knowledge/pages/api.js"
import { admits } from "../mcp-door/admits.js"
import { operation } from "../mcp-door/operation.js"
import { collectAll } from "../mcp-door/resolve.js"
import type { CallContext } from "../mcp-door/tool.js"

/** The most page resources listed. */
export const listedPagesMax = 1000

/** A page's resource address. */
export const pageUri = (knowledgebaseId: string, pageId: string): string => `svc://knowledgebases/${knowledgebaseId}/pages/${pageId}`

/** A page resource mirrors `GET /knowledgebases/{id}/pages/{pageId}`: its scope and gate admit a reader. */
export const pageReadOperation = operation(PagesApi, "get")

const readable = (call: CallContext) => call.families.has("knowledge") && admits(call.principal, pageReadOperation)

/** The page resources the caller may read (folders are not resources). */
export const pageResources = (call: CallContext) =>
  Effect.gen(function* () {
    if (!readable(call)) return []
    const knowledgebases = yield* collectAll((cursor) => Effect.flatMap(KnowledgebaseService, (kbs) => kbs.list(call.principal, { limit: pageSize.max, cursor })))
    const pages = yield* PageService
    const listed: Array<{ uri: string; name: string; title: string; mimeType: string; description: string }> = []
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

/** A page resource's markdown. */
export const readPageResource = (call: CallContext, knowledgebaseId: string, pageId: string) =>
  readable(call)
    ? Effect.map(Effect.flatMap(PageService, (pages) => pages.get(call.principal, knowledgebaseId, pageId)), (page) => ({ text: page.markdown }))
    : Effect.fail(new NotFound({ message: "Page resources need the knowledge family (`?tools=knowledge`)." }))
