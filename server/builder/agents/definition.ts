/** An Agent's definition as kept in JSON text (drafts and versions), and the views built from rows. */
import type { ItemRow, VersionRow } from "../versions/store.js"
import { type Agent, type AgentDefinition, type AgentDraft, defaultModel } from "./domain.js"

/** The definition kept in a draft or version's JSON text; missing properties take their defaults. */
export const parseAgentDefinition = (text: string): AgentDefinition => {
  const kept = JSON.parse(text) as Partial<AgentDefinition>
  return {
    instructions: kept.instructions ?? "",
    model: kept.model ?? defaultModel,
    greeting: kept.greeting ?? null,
    knowledgebaseIds: kept.knowledgebaseIds ?? [],
    flowIds: kept.flowIds ?? []
  }
}

/** The JSON text a definition is kept as. */
export const agentDefinitionText = (definition: AgentDefinition): string => JSON.stringify(definition)

/** An Agent's draft view from its row. */
export const toAgentDraft = (row: ItemRow): AgentDraft => ({
  id: row.id,
  name: row.name,
  description: row.description,
  ...parseAgentDefinition(row.draft),
  publishedVersion: row.published_version,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** A published Agent from its published version's row. */
export const toAgent = (row: VersionRow & { readonly id: string }): Agent => ({
  id: row.id,
  name: row.name,
  description: row.description,
  ...parseAgentDefinition(row.definition),
  version: row.version,
  publishedAt: row.published_at
})
