/** An App's definition as kept in JSON text (drafts and versions), and the views built from rows. */
import type { ItemRow, VersionRow } from "../versions/store-repo.js"
import { shownModel } from "../versions/model.js"
import type { App, AppDefinition, AppDraft, PinnedMember } from "./domain.js"
import { type AppContractColumns, contractOf } from "./repo.js"

/** What an App's version keeps in its JSON text: the greeting and the member versions it pinned. */
export interface AppVersionDefinition {
  readonly greeting: string | null
  readonly agents: ReadonlyArray<PinnedMember>
  readonly flows: ReadonlyArray<PinnedMember>
}

/** The draft definition kept in JSON text; missing properties take their defaults. */
export const parseAppDefinition = (text: string): AppDefinition => {
  const kept = JSON.parse(text) as Partial<AppDefinition>
  return {
    greeting: kept.greeting ?? null,
    agentIds: kept.agentIds ?? [],
    flowIds: kept.flowIds ?? [],
    api: {
      transactionEnabled: kept.api?.transactionEnabled ?? false,
      inputSchema: kept.api?.inputSchema ?? null,
      outputSchema: kept.api?.outputSchema ?? null
    }
  }
}

/** The JSON text a draft definition is kept as. */
export const appDefinitionText = (definition: AppDefinition): string => JSON.stringify(definition)

/** An App's draft view from its row, on a server whose default model (the Supervisor's) is `serverDefault`. */
export const toAppDraft = (row: ItemRow, serverDefault: string): AppDraft => ({
  id: row.id,
  name: row.name,
  description: row.description,
  ...parseAppDefinition(row.draft),
  ...shownModel(null, serverDefault),
  publishedVersion: row.published_version,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** A published App from its published version's row, on a server whose default model (the Supervisor's) is `serverDefault`. */
export const toApp = (row: VersionRow & AppContractColumns & { readonly id: string }, serverDefault: string): App => {
  const kept = JSON.parse(row.definition) as Partial<AppVersionDefinition>
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ...contractOf(row),
    greeting: kept.greeting ?? null,
    agents: kept.agents ?? [],
    flows: kept.flows ?? [],
    ...shownModel(null, serverDefault),
    version: row.version,
    publishedAt: row.published_at
  }
}
