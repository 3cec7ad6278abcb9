/**
 * Old spellings accepted for one release (spec: Versioning 5), mapped on arrival before the server
 * sees the message: old tool names to their current tools, and snake_case argument names (top level,
 * and inside `patch` operations) to camelCase. The camelCase spelling wins when both are sent.
 * Tools whose parameters are snake_case by design (Flow tools) keep their arguments as sent.
 */

/** Old tool names and the tools that replaced them. */
export const legacyToolNames: Readonly<Record<string, string>> = {
  create_page: "save_page",
  update_page: "save_page",
  edit_page: "save_page",
  create_agent: "save_agent",
  update_agent: "save_agent",
  create_flow: "save_flow",
  update_flow: "save_flow",
  create_app: "save_app",
  update_app: "save_app"
}

/** `knowledge_base_id` -> `knowledgeBaseId`; names without `_` are unchanged. */
export const camelName = (name: string): string => name.replace(/_+([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())

const camelKeys = (value: Record<string, unknown>): Record<string, unknown> => {
  const mapped: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) if (camelName(key) === key) mapped[key] = item
  for (const [key, item] of Object.entries(value)) {
    const camel = camelName(key)
    if (camel !== key && !(camel in mapped)) mapped[camel] = item
  }
  return mapped
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Old spellings of the `knowledgebaseId` argument (`knowledge_base_id`, `kb_id`). */
const argumentAliases: Readonly<Record<string, string>> = { knowledgeBaseId: "knowledgebaseId", kbId: "knowledgebaseId" }

/** A tool's arguments with old spellings mapped. */
export const mapArguments = (args: Record<string, unknown>): Record<string, unknown> => {
  const mapped = camelKeys(args)
  for (const [alias, name] of Object.entries(argumentAliases)) {
    if (alias in mapped) {
      if (!(name in mapped)) mapped[name] = mapped[alias]
      delete mapped[alias]
    }
  }
  if (Array.isArray(mapped["patch"])) mapped["patch"] = mapped["patch"].map((op) => (isObject(op) ? camelKeys(op) : op))
  return mapped
}

/**
 * A JSON-RPC message with old spellings mapped: a `tools/call` naming an old tool is sent to its
 * replacement, and its arguments are mapped unless `keepsArguments(tool)`.
 */
export const mapLegacyMessage = <M>(message: M, keepsArguments: (tool: string) => boolean): M => {
  if (!isObject(message) || message["method"] !== "tools/call" || !isObject(message["params"])) return message
  const params = message["params"]
  const given = typeof params["name"] === "string" ? params["name"] : null
  if (given === null) return message
  const name = legacyToolNames[given] ?? given
  const args = isObject(params["arguments"]) && !keepsArguments(name) ? mapArguments(params["arguments"]) : params["arguments"]
  return { ...message, params: { ...params, name, ...(args === undefined ? {} : { arguments: args }) } } as M
}
