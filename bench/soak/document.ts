/** The operations of a running server's OpenAPI document, and which kind of object each path slot names. */
import type { SoakClient } from "./http.js"
import type { SeededIds } from "./seed.js"

/** One operation of the document. */
export interface Operation {
  readonly method: string
  /** The template under the API root: `/knowledgebases/{id}/pages/{pageId}`. */
  readonly template: string
  readonly operation: any
  /** Its path parameters, in order. */
  readonly params: ReadonlyArray<string>
}

/** The API root every template sits under. */
export const apiRoot = "/api/v1"

/** Reads `GET /api/v1/openapi.json` and lists its operations (deletes last, so they run after the rest). */
export const readOperations = async (client: SoakClient): Promise<{ doc: any; operations: Array<Operation> }> => {
  const answer = await client.send({ method: "GET", path: `${apiRoot}/openapi.json` })
  if (!answer.ok || answer.status !== 200) throw new Error(`GET /openapi.json: ${answer.ok ? answer.status : answer.error}`)
  const doc = answer.json
  const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        template: template.slice(apiRoot.length),
        operation,
        params: [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!)
      }))
  )
  operations.sort((x, y) => Number(x.method === "DELETE") - Number(y.method === "DELETE"))
  return { doc, operations }
}

/** The kind of object the path parameter `param` of `template` names. */
export const slotKind = (template: string, param: string): keyof SeededIds => {
  switch (param) {
    case "pageId":
      return "page"
    case "sourceId":
      return "source"
    case "reviewId":
      return "review"
    case "subscriptionId":
      return "subscription"
    case "grantId":
      return "groupGrant"
    case "groupId":
      return "group"
    case "endUserId":
      return template.startsWith("/user-groups/") ? "groupMember" : "endUser"
  }
  const root = template.split("/")[1]
  const byRoot: Record<string, keyof SeededIds> = {
    knowledgebases: "knowledgebase",
    agents: "agent",
    apps: "app",
    flows: "flow",
    executions: "execution",
    conversations: "conversation",
    portals: "portal"
  }
  const kind = root === undefined ? undefined : byRoot[root]
  if (!kind) throw new Error(`no kind for {${param}} of ${template}`)
  return kind
}

/** `template` with each parameter filled by `fill`. */
export const fillPath = (template: string, fill: (param: string) => string): string =>
  apiRoot + template.replace(/\{(\w+)\}/g, (_, param: string) => encodeURIComponent(fill(param)))
