/**
 * `resource_link` content beside a tool's JSON text (MCP 2025-11-25): every page and source its
 * answer names, as the resource `resources/read` reads (`resource-uris.ts`). Where they sit is read
 * once per output schema, from the answer's shape, not declared per tool: an object whose schema
 * has a page's fields (`id`, `title`, `templateKey`), a source's (`id`, `name`, `sizeBytes`,
 * `status`) or a citation's (`knowledgebaseId`, `pageId`, `sourceId`). A page or source that does
 * not carry its Knowledgebase takes the one the call's `knowledgebaseId` argument resolved to.
 * Folders are not resources and get no link; `structuredContent` is left as it is.
 */
import type { ResourceLink } from "@modelcontextprotocol/sdk/types.js"
import type { JsonSchema } from "./operation.js"
import { pageUri, sourceUri } from "./resource-uris.js"

/** The most links one result carries (a list's largest page). */
export const resourceLinksMax = 200

/** What an object of an answer is, for links. */
type LinkedKind = "page" | "source" | "citation"

/** Where in an answer objects of one kind sit: property names, `*` for each item of an array. */
interface LinkSite {
  readonly path: ReadonlyArray<string>
  readonly kind: LinkedKind
}

const shapes: ReadonlyArray<readonly [LinkedKind, ReadonlyArray<string>]> = [
  ["citation", ["knowledgebaseId", "pageId", "sourceId"]],
  ["page", ["id", "title", "templateKey"]],
  ["source", ["id", "name", "sizeBytes", "status"]]
]

const kindOf = (schema: JsonSchema): LinkedKind | null => {
  const properties = schema["properties"]
  if (properties === null || typeof properties !== "object") return null
  return shapes.find(([, fields]) => fields.every((field) => field in properties))?.[0] ?? null
}

/** Every site of a linked kind in `schema` (unions walked member by member). */
const sitesOf = (schema: unknown, path: ReadonlyArray<string>, found: Map<string, LinkSite>): void => {
  if (schema === null || typeof schema !== "object") return
  const node = schema as JsonSchema
  for (const member of [...((node["anyOf"] ?? []) as Array<unknown>), ...((node["oneOf"] ?? []) as Array<unknown>)]) sitesOf(member, path, found)
  const kind = kindOf(node)
  if (kind !== null) found.set(JSON.stringify([path, kind]), { path, kind })
  if (node["items"] !== undefined) sitesOf(node["items"], [...path, "*"], found)
  const properties = node["properties"]
  if (properties !== null && typeof properties === "object") {
    for (const [name, property] of Object.entries(properties as JsonSchema)) sitesOf(property, [...path, name], found)
  }
}

const sitesByAnswer = new WeakMap<JsonSchema, ReadonlyArray<LinkSite>>()

/** The sites of linked objects in answers of `schema` (read once per schema). */
export const linkSites = (schema: JsonSchema): ReadonlyArray<LinkSite> => {
  let sites = sitesByAnswer.get(schema)
  if (sites === undefined) {
    const found = new Map<string, LinkSite>()
    sitesOf(schema, [], found)
    sitesByAnswer.set(schema, (sites = [...found.values()]))
  }
  return sites
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value)

/** The objects at `path` in `value`. */
const objectsAt = (value: unknown, path: ReadonlyArray<string>): Array<Record<string, unknown>> => {
  if (path.length === 0) return isRecord(value) ? [value] : []
  const [head, ...rest] = path
  if (head === "*") return Array.isArray(value) ? value.flatMap((item) => objectsAt(item, rest)) : []
  return isRecord(value) ? objectsAt(value[head!], rest) : []
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const pageLink = (knowledgebaseId: string, pageId: string, title: string | undefined, description: string | undefined): ResourceLink => ({
  type: "resource_link",
  uri: pageUri(knowledgebaseId, pageId),
  name: title ?? pageId,
  mimeType: "text/markdown",
  ...(description === undefined ? {} : { description })
})

const sourceLink = (knowledgebaseId: string, sourceId: string, name: string | undefined): ResourceLink => ({
  type: "resource_link",
  uri: sourceUri(knowledgebaseId, sourceId),
  name: name ?? sourceId,
  mimeType: "application/json"
})

/** The link of one object of a linked kind (null: not a resource, or its Knowledgebase unknown). */
const linkOf = (kind: LinkedKind, item: Record<string, unknown>, knowledgebaseId: string | undefined): ResourceLink | null => {
  if (kind === "citation") {
    const kb = text(item["knowledgebaseId"])
    if (kb === undefined) return null
    const pageId = text(item["pageId"])
    if (item["kind"] === "page" && pageId !== undefined) return pageLink(kb, pageId, text(item["title"]), undefined)
    const sourceId = text(item["sourceId"])
    return item["kind"] === "document" && sourceId !== undefined ? sourceLink(kb, sourceId, text(item["sourceName"])) : null
  }
  const id = text(item["id"])
  const kb = text(item["knowledgebaseId"]) ?? knowledgebaseId
  if (id === undefined || kb === undefined) return null
  if (kind === "source") return sourceLink(kb, id, text(item["name"]))
  if (item["templateKey"] === "folder" || item["isFolder"] === true) return null
  return pageLink(kb, id, text(item["title"]), text(item["description"]))
}

/**
 * The resource links of an answer of `schema`: each page and source it names, once (site by site,
 * in the order of each site's items), at most `resourceLinksMax`. `resolved` are the ids the call's id arguments resolved to.
 */
export const resourceLinks = (schema: JsonSchema, value: unknown, resolved: ReadonlyMap<string, ReadonlySet<string>>): Array<ResourceLink> => {
  const sites = linkSites(schema)
  if (sites.length === 0) return []
  const knowledgebases = resolved.get("knowledgebaseId")
  const knowledgebaseId = knowledgebases !== undefined && knowledgebases.size === 1 ? [...knowledgebases][0] : undefined
  const links = new Map<string, ResourceLink>()
  for (const site of sites) {
    for (const item of objectsAt(value, site.path)) {
      const link = linkOf(site.kind, item, knowledgebaseId)
      if (link !== null && !links.has(link.uri)) links.set(link.uri, link)
      if (links.size >= resourceLinksMax) return [...links.values()]
    }
  }
  return [...links.values()]
}
