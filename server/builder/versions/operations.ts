/**
 * What Agents, Flows and Apps do alike beyond their SQL: deleting with the Admin role, the listing
 * request and its cursor binding, the scope a drafts listing needs, and a draft listing item.
 */
import { Effect } from "effect"
import type { ApiScope, Principal } from "../../identity/domain.js"
import { InsufficientScope, type InsufficientRole, type NotFound } from "../../platform/errors.js"
import { requireAdmin } from "./roles.js"
import type { ItemRow } from "./store-repo.js"

/** How to list Agents, Flows or Apps. */
export interface ItemListRequest {
  readonly includeDrafts: boolean
  /** ISO 8601; inclusive. */
  readonly updatedSince: string | null
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * The name a listing's cursors are bound to: the kind, the organization and the filters, so a
 * cursor cannot be replayed against another listing.
 */
export const listName = (kind: "agents" | "flows" | "apps", organizationId: string, request: ItemListRequest): string =>
  `${kind}:${organizationId}:${request.includeDrafts ? "drafts" : "published"}:${request.updatedSince ?? ""}`

/** Listing drafts (`include=drafts`) needs the kind's write scope. */
export const requireDraftsScope = (actor: Principal, scope: ApiScope): Effect.Effect<void, InsufficientScope> =>
  actor.scopes.has(scope)
    ? Effect.void
    : Effect.fail(new InsufficientScope({ message: `Listing drafts (include=drafts) needs the scope '${scope}'.` }))

/** An item as the drafts listing shows it. */
export const draftListItem = (row: ItemRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  published: row.published_version !== null,
  updatedAt: row.updated_at
})

/** Deletes an item and its versions (Admin role, checked before the id is looked up), or `not_found`. */
export const removeItem = (
  actor: Principal,
  what: string,
  remove: Effect.Effect<boolean>,
  notFound: () => NotFound
): Effect.Effect<{ readonly ok: true }, InsufficientRole | NotFound> =>
  Effect.gen(function* () {
    yield* requireAdmin(actor, what)
    if (!(yield* remove)) return yield* Effect.fail(notFound())
    return { ok: true as const }
  })
