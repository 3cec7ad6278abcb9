/** An App's member Agents as the Supervisor sees them: each with its definition and the name of its `ask_` tool. */
import { parseAgentDefinition } from "../../builder/agents/definition.js"
import type { AgentDefinition } from "../../builder/agents/domain.js"
import type { MemberAgentRow } from "./repo.js"

/** A member Agent at the version that runs. */
export interface Member {
  readonly id: string
  readonly version: number
  readonly name: string
  readonly description: string
  readonly definition: AgentDefinition
  /** The Supervisor's tool for it: `ask_` and its name in lower case, other characters `_`, unique in the App. */
  readonly tool: string
}

/** Longest tool name OpenAI-compatible servers take. */
const maxToolName = 64

const slugOf = (name: string): string =>
  name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "") || "agent"

/** The members from their version rows, in order; a repeated tool name takes `_2`, `_3`, … */
export const membersOf = (rows: ReadonlyArray<MemberAgentRow>): ReadonlyArray<Member> => {
  const taken = new Set<string>()
  return rows.map((row) => {
    const base = `ask_${slugOf(row.name)}`.slice(0, maxToolName - 4)
    let tool = base
    for (let n = 2; taken.has(tool); n++) tool = `${base}_${n}`
    taken.add(tool)
    return { id: row.id, version: row.version, name: row.name, description: row.description, definition: parseAgentDefinition(row.definition), tool }
  })
}
