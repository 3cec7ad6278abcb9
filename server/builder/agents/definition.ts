/** An Agent's definition as kept in JSON text (drafts and versions), and the views built from rows. */
import type { ItemRow, VersionRow } from "../versions/store-repo.js"
import { shownModel } from "../versions/model.js"
import type { Agent, AgentDefinition, AgentDraft } from "./domain.js"

/**
 * The definition kept in a draft or version's JSON text; missing properties take their defaults
 * (no `model`, or `null`: the server's default, resolved at run time).
 */
export const parseAgentDefinition = (text: string): AgentDefinition => {
  const kept = JSON.parse(text) as Partial<AgentDefinition>
  return {
    instructions: kept.instructions ?? "",
    model: kept.model ?? null,
    greeting: kept.greeting ?? null,
    knowledgebaseIds: kept.knowledgebaseIds ?? [],
    flowIds: kept.flowIds ?? []
  }
}

/** The JSON text a definition is kept as; a definition naming no model keeps no `model`. */
export const agentDefinitionText = ({ model, ...rest }: AgentDefinition): string => JSON.stringify(model === null ? rest : { ...rest, model })

/** The definition as reads show it: its model resolved against the server's default model `serverDefault`. */
const shownDefinition = (text: string, serverDefault: string) => {
  const { model, ...rest } = parseAgentDefinition(text)
  return { ...rest, ...shownModel(model, serverDefault) }
}

/** An Agent's draft view from its row, on a server whose default model is `serverDefault`. */
export const toAgentDraft = (row: ItemRow, serverDefault: string): AgentDraft => ({
  id: row.id,
  name: row.name,
  description: row.description,
  ...shownDefinition(row.draft, serverDefault),
  publishedVersion: row.published_version,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** A published Agent from its published version's row, on a server whose default model is `serverDefault`. */
export const toAgent = (row: VersionRow & { readonly id: string }, serverDefault: string): Agent => ({
  id: row.id,
  name: row.name,
  description: row.description,
  ...shownDefinition(row.definition, serverDefault),
  version: row.version,
  publishedAt: row.published_at
})
