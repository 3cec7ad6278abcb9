/**
 * An App's members as the Supervisor sees them: Agents (each with its definition and an `ask_`
 * tool) and Flows (each checked, with a `flow_` tool taking its inputs), at the versions that run.
 */
import { Either } from "effect"
import { parseAgentDefinition } from "../../builder/agents/definition.js"
import type { AgentDefinition } from "../../builder/agents/domain.js"
import type { CheckedFlow } from "../../builder/flows/definition.js"
import type { TemplateValue } from "../../builder/flows/templates.js"
import { runInputs } from "../flow-runs/inputs.js"
import { flowToolNames, toolSlug } from "../flow-runs/tools.js"
import type { MemberVersionRow } from "./repo.js"

interface MemberBase {
  readonly id: string
  readonly version: number
  readonly name: string
  readonly description: string
  /** The Supervisor's tool for it, unique in the App. */
  readonly tool: string
}

/** A member Agent at the version that runs; its tool is `ask_` and its name in lower case. */
export interface AgentMember extends MemberBase {
  readonly kind: "agent"
  readonly definition: AgentDefinition
}

/** A member Flow at the version that runs; its tool is `flow_` and its name in lower case. */
export interface FlowMember extends MemberBase {
  readonly kind: "flow"
  readonly flow: CheckedFlow
}

/** A member of an App. */
export type Member = AgentMember | FlowMember

/** Longest tool name OpenAI-compatible servers take. */
const maxToolName = 64

/** The Agent members from their version rows, in order; a repeated tool name takes `_2`, `_3`, … */
export const agentMembersOf = (rows: ReadonlyArray<MemberVersionRow>): ReadonlyArray<AgentMember> => {
  const taken = new Set<string>()
  return rows.map((row) => {
    const base = `ask_${toolSlug(row.name, "agent")}`.slice(0, maxToolName - 4)
    let tool = base
    for (let n = 2; taken.has(tool); n++) tool = `${base}_${n}`
    taken.add(tool)
    return { kind: "agent", id: row.id, version: row.version, name: row.name, description: row.description, definition: parseAgentDefinition(row.definition), tool }
  })
}

/** The Flow members from their version rows and checked definitions, in order, named like an Agent's Flow tools. */
export const flowMembersOf = (rows: ReadonlyArray<{ readonly row: MemberVersionRow; readonly flow: CheckedFlow }>): ReadonlyArray<FlowMember> => {
  const names = flowToolNames(rows.map(({ row }) => row.name))
  return rows.map(({ row, flow }, i) => ({ kind: "flow", id: row.id, version: row.version, name: row.name, description: row.description, flow, tool: names[i]! }))
}

/**
 * The inputs the `builtin` Supervisor gives a Flow member for `message`, or null when it cannot:
 * a Flow without questions takes the message itself; a Flow with questions takes a message that is
 * a JSON object its inputs accept (a transaction's input, typically), and nothing else.
 */
export const builtinFlowArguments = (flow: CheckedFlow, message: string): Readonly<Record<string, TemplateValue>> | { readonly message: string } | null => {
  if (flow.conversational) return { message }
  let parsed: unknown
  try {
    parsed = JSON.parse(message)
  } catch {
    return null
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null
  return Either.isRight(runInputs(flow, { inputs: parsed as Record<string, unknown> })) ? (parsed as Record<string, TemplateValue>) : null
}
