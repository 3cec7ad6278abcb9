/** How Flows are offered to a model as tools: their names (`flow_<name>`, sanitised, unique) and parameters. */
import type { CheckedFlow } from "../../builder/flows/definition.js"
import { flowInputsSchema } from "../../builder/flows/inputs.js"
import type { JsonSchemaObject } from "../model.js"
import { maxMessageChars } from "../runs/domain.js"

/** Longest tool name OpenAI-compatible APIs take. */
export const maxToolNameChars = 64

const prefix = "flow_"

/** A name in lower-case ASCII letters, digits and `_` (diacritics dropped, each other run one `_`), or `fallback` when nothing is left. */
export const toolSlug = (name: string, fallback: string): string =>
  name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "") || fallback

/** `flow_` and the name as a tool slug. */
export const flowToolName = (name: string): string => `${prefix}${toolSlug(name, "flow")}`.slice(0, maxToolNameChars)

/** Tool names for Flows named `names`, in order; a name already taken gets `_2`, `_3`, … (kept within 64 characters). */
export const flowToolNames = (names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const taken = new Set<string>()
  return names.map((name) => {
    const base = flowToolName(name)
    let candidate = base
    for (let n = 2; taken.has(candidate); n++) {
      const suffix = `_${n}`
      candidate = `${base.slice(0, maxToolNameChars - suffix.length)}${suffix}`
    }
    taken.add(candidate)
    return candidate
  })
}

/** A Flow tool's parameters: the Flow's inputs schema, or `{message}` for a Flow without questions. */
export const flowToolParameters = (flow: CheckedFlow): JsonSchemaObject => {
  if (flow.conversational) {
    return {
      type: "object",
      properties: { message: { type: "string", minLength: 1, maxLength: maxMessageChars, description: "The message the Flow runs on." } },
      required: ["message"],
      additionalProperties: false
    }
  }
  const { $schema: _dialect, ...schema } = flowInputsSchema(flow)
  return { ...schema, type: "object" }
}
