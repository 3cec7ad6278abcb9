/**
 * Scope tokens of indexed passages: one for the organization and one per Knowledgebase the
 * document is attached to, stored in the passage's `scope` column. A search ANDs its scope token
 * into the FTS5 query, so the index itself narrows to the caller's organization or Knowledgebase
 * (no join per match). Tokens end in a digit so the Porter stemmer leaves them whole.
 */

const compact = (id: string) => id.replaceAll("-", "").toLowerCase()

/** The token of an organization. */
export const organizationScope = (organizationId: string): string => `o${compact(organizationId)}0`

/** The token of a Knowledgebase. */
export const knowledgebaseScope = (knowledgebaseId: string): string => `k${compact(knowledgebaseId)}0`

/** A passage's scope column: its organization and every Knowledgebase its document is attached to. */
export const passageScope = (organizationId: string, knowledgebaseIds: ReadonlyArray<string>): string =>
  [organizationScope(organizationId), ...knowledgebaseIds.map(knowledgebaseScope)].join(" ")
