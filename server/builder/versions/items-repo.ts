/**
 * What other families ask of the builder's items (Agents, Flows and Apps), answered by the builder:
 * which ids name an item of an organization (a grant's target), and which items an organization has
 * published at which versions (the MCP per-item tools). Steps run inside the caller's transaction
 * (`statementsOn` or the write fast path); readings run on the read connection.
 */
import { Effect } from "effect"
import type { Reads } from "../../platform/sql/read-connection.js"
import { placeholders, textPerCount } from "../../platform/sql/statement-text.js"
import { type TxBody, txAll } from "../../platform/sql/write-fast-path.js"

const itemIdsText = textPerCount((count) => {
  const ids = placeholders(count)
  return `SELECT id FROM apps WHERE organization_id = ? AND id IN (${ids})
    UNION ALL SELECT id FROM flows WHERE organization_id = ? AND id IN (${ids})
    UNION ALL SELECT id FROM agents WHERE organization_id = ? AND id IN (${ids})`
})

/** Which of `ids` name an App, a Flow or an Agent of the organization (a transaction body step). */
export function* builderItemIdsTx(organizationId: string, ids: ReadonlyArray<string>): TxBody<Set<string>> {
  if (ids.length === 0) return new Set<string>()
  const rows = yield* txAll<{ id: string }>(itemIdsText(ids.length), [organizationId, ...ids, organizationId, ...ids, organizationId, ...ids])
  return new Set(rows.map((row) => row.id))
}

const appIdsText = textPerCount((count) => `SELECT id FROM apps WHERE organization_id = ? AND id IN (${placeholders(count)})`)

/** Which of `ids` name an App of the organization (a transaction body step). */
export function* appIdsTx(organizationId: string, ids: ReadonlyArray<string>): TxBody<Set<string>> {
  if (ids.length === 0) return new Set<string>()
  const rows = yield* txAll<{ id: string }>(appIdsText(ids.length), [organizationId, ...ids])
  return new Set(rows.map((row) => row.id))
}

/** One published item: its kind, id and published version. */
export interface PublishedItem {
  readonly kind: "agent" | "flow" | "app"
  readonly id: string
  readonly version: number
}

/** Every Agent, Flow and App the organization has published, with its version, by kind then id (read connection). */
export const publishedItems = (reader: Reads, organizationId: string): Effect.Effect<ReadonlyArray<PublishedItem>> =>
  Effect.orDie(
    reader.all<PublishedItem>(
      `SELECT 'agent' AS kind, id, published_version AS version FROM agents WHERE organization_id = ? AND published_version IS NOT NULL
        UNION ALL SELECT 'flow', id, published_version FROM flows WHERE organization_id = ? AND published_version IS NOT NULL
        UNION ALL SELECT 'app', id, published_version FROM apps WHERE organization_id = ? AND published_version IS NOT NULL
        ORDER BY 1, 2`,
      [organizationId, organizationId, organizationId]
    )
  )
