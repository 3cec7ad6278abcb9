/**
 * The addresses of what MCP offers as resources (conventions: MCP, page resources): pages and
 * sources of a Knowledgebase, and published Agents, Flows and Apps. Each kind's URI template (what
 * `resources/templates/list` shows and `completion/complete` names) and the address of one item.
 */

/** A page of a Knowledgebase, as markdown. */
export const pageTemplate = "svc://knowledgebases/{knowledgebaseId}/pages/{pageId}"
/** A source (document) of a Knowledgebase, as REST's `{source}`. */
export const sourceTemplate = "svc://knowledgebases/{knowledgebaseId}/sources/{sourceId}"
/** A published Agent, as REST's `{agent}`. */
export const agentTemplate = "svc://agents/{agentId}"
/** A published Flow, as REST's `{flow}`. */
export const flowTemplate = "svc://flows/{flowId}"
/** A published App, as REST's `{app}`. */
export const appTemplate = "svc://apps/{appId}"

/** A page's resource address. */
export const pageUri = (knowledgebaseId: string, pageId: string): string => `svc://knowledgebases/${knowledgebaseId}/pages/${pageId}`

/** A source's resource address. */
export const sourceUri = (knowledgebaseId: string, sourceId: string): string => `svc://knowledgebases/${knowledgebaseId}/sources/${sourceId}`
