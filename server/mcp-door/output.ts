/**
 * A tool's output schema, derived from the answers of the REST operations it mirrors: each way a
 * tool's answer may differ from its operation's body is one derivation here, named once, and a tool
 * names the one it answers by (none: the REST body as is). A tool with no REST twin, or whose answer
 * is its own (a report of several runs), declares its output as an Effect Schema instead. MCP wants
 * an object at the top of an output schema: a union of bodies is `{type: "object", anyOf: [...]}`.
 */
import type { Schema } from "effect"
import { type JsonSchema, type Operation, standaloneSchema } from "./operation.js"

/** What a derivation may read of the tool beyond its operations: its argument names (`fields` narrows items). */
export interface OutputContext {
  readonly argumentNames: ReadonlySet<string>
}

/** How a tool's answer is made from its operations' REST answers. */
export interface Derivation {
  /** Says what the tool answers, for declarations read by people (`the REST body as is`). */
  readonly says: string
  readonly derive: (operations: ReadonlyArray<Operation>, tool: OutputContext) => JsonSchema
}

/** An output schema the tool declares itself (no REST twin, or an answer of its own), with why when it has a twin. */
export interface DeclaredOutput {
  readonly schema: Schema.Schema.All
  readonly because?: string
}

/** `schemas` as one object schema: itself when one, else their union (each member kept once). */
export const unionOf = (schemas: ReadonlyArray<JsonSchema>): JsonSchema => {
  const members = new Map<string, JsonSchema>()
  for (const schema of schemas) {
    const parts = schema["type"] === undefined && Array.isArray(schema["anyOf"]) ? (schema["anyOf"] as Array<JsonSchema>) : [schema]
    for (const part of parts) members.set(JSON.stringify(part), part)
  }
  const all = [...members.values()]
  return all.length === 1 ? asObject(all[0]!) : { type: "object", anyOf: all }
}

/** A schema with `type: "object"` at its top (a union of objects gains it beside its `anyOf`). */
const asObject = (schema: JsonSchema): JsonSchema => (schema["type"] === "object" ? schema : { type: "object", ...schema })

/** Each member of a union (or the schema itself), changed by `change`. */
const eachMember = (schema: JsonSchema, change: (member: JsonSchema) => JsonSchema): JsonSchema =>
  Array.isArray(schema["anyOf"]) && schema["properties"] === undefined
    ? unionOf((schema["anyOf"] as Array<JsonSchema>).map(change))
    : asObject(change(schema))

/** The REST body as is (the default): a union when the tool mirrors several operations. */
export const restBody: Derivation = {
  says: "the REST body as is",
  derive: (operations) => unionOf(operations.map((one) => one.output))
}

/** The array of items of a list's body (`knowledgebases`, `pages`), the one not `kept` as is: its name and item schema. */
const listedItems = (body: JsonSchema, operation: Operation, kept: ReadonlyArray<string>): [string, JsonSchema] => {
  const arrays = Object.entries((body["properties"] ?? {}) as Record<string, JsonSchema>).filter(
    ([name, property]) => property["type"] === "array" && !kept.includes(name)
  )
  if (arrays.length !== 1) throw new Error(`${operation.name}: a list's body has one array of items; it has ${arrays.length}.`)
  return [arrays[0]![0], arrays[0]![1]["items"] as JsonSchema]
}

/** `change` applied to each member of a union (`anyOf`), or to the schema itself. */
const eachOf = (schema: JsonSchema, change: (member: JsonSchema) => JsonSchema): JsonSchema =>
  Array.isArray(schema["anyOf"]) ? { ...schema, anyOf: (schema["anyOf"] as Array<JsonSchema>).map((member) => eachOf(member, change)) } : change(schema)

/** An item with every field optional (cut to `fields`). */
const narrowable = (item: JsonSchema): JsonSchema => {
  const { required: _, ...rest } = item
  return rest
}

/**
 * A list as MCP lists answer it (`itemsPage` in tool.ts): `{items, nextCursor}`, the items those of the
 * REST body's one array, every field optional when the tool takes `fields`; `keep` names other
 * properties of the REST body the tool passes on (`parent`, `tailCursor`), optional unless REST
 * requires them. With several operations (`kinds`, one per operation), each item carries the `kind`
 * of the list it comes from.
 */
export const itemsOf = (options: { readonly keep?: ReadonlyArray<string>; readonly kinds?: ReadonlyArray<string> } = {}): Derivation => ({
  says: `a page of REST's items as \`{items, nextCursor${(options.keep ?? []).map((name) => `, ${name}`).join("")}}\``,
  derive: (operations, tool) => {
    const first = operations[0]!.output
    const items = operations.map((operation, index) => {
      const [, item] = listedItems(operation.output, operation, options.keep ?? [])
      const cut = tool.argumentNames.has("fields") || options.kinds !== undefined ? eachOf(item, narrowable) : item
      const kind = options.kinds?.[index]
      return kind === undefined
        ? cut
        : eachOf(cut, (member) => ({ ...member, required: ["kind"], properties: { kind: { type: "string", enum: [kind] }, ...(member["properties"] ?? {}) } }))
    })
    const properties = (first["properties"] ?? {}) as Record<string, JsonSchema>
    const required = new Set((first["required"] ?? []) as Array<string>)
    const keep = options.keep ?? []
    return {
      type: "object",
      required: ["items", "nextCursor", ...keep.filter((name) => required.has(name))],
      properties: {
        items: { type: "array", items: items.length === 1 ? items[0] : { anyOf: items } },
        nextCursor: properties["nextCursor"] ?? { anyOf: [{ type: "string" }, { type: "null" }] },
        ...Object.fromEntries(keep.map((name) => [name, properties[name] ?? {}]))
      },
      additionalProperties: false
    }
  }
})

/** The REST body with fields of the tool's own beside it (`created`, `truncated`), from their Effect Schema. */
export const restBodyWith = (own: Schema.Schema.All): Derivation => ({
  says: "the REST body with fields of the tool's own",
  derive: (operations) => {
    const extra = standaloneSchema(own)
    return eachMember(restBody.derive(operations, { argumentNames: new Set() }), (member) => ({
      ...member,
      required: [...((member["required"] ?? []) as Array<string>), ...((extra["required"] ?? []) as Array<string>)],
      properties: { ...(member["properties"] ?? {}), ...(extra["properties"] ?? {}) }
    }))
  }
})

/** `conversation_id` → `conversationId` (`camelReply` in tool.ts): a run's answer as MCP gives it. */
export const camelRunReply: Derivation = {
  says: "the REST body with `conversation_id` as `conversationId`",
  derive: (operations) =>
    eachMember(restBody.derive(operations, { argumentNames: new Set() }), (member) => {
      const rename = (name: string) => (name === "conversation_id" ? "conversationId" : name)
      return {
        ...member,
        ...(member["required"] === undefined ? {} : { required: (member["required"] as Array<string>).map(rename) }),
        properties: Object.fromEntries(Object.entries((member["properties"] ?? {}) as JsonSchema).map(([name, value]) => [rename(name), value]))
      }
    })
}

/** The output schema of a declared Effect Schema (an object at the top). */
export const declaredSchema = (declared: DeclaredOutput): JsonSchema => asObject(standaloneSchema(declared.schema))
