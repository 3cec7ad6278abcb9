/**
 * Tier plans: created and archived by an admin (the dashboard's part, `svc plans`), listed through
 * the API. Creating a plan creates its plan group in the same transaction.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { type NewTierPlan, type TierPlan, toTierPlan } from "./domain.js"
import { TierPlanRepo } from "./repo.js"

/** How to page through a listing. */
export interface ListPage {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Names must say something: trimmed, 1 to 200 characters. */
export const checkName = (what: string, raw: string): Effect.Effect<string, InvalidRequest> => {
  const name = raw.trim()
  return name.length === 0 || name.length > 200
    ? Effect.fail(new InvalidRequest({ message: `name: a ${what} needs a name of 1 to 200 characters.` }))
    : Effect.succeed(name)
}

/** The plan catalog of an organization. */
export class TierPlanService extends Effect.Service<TierPlanService>()("svc/TierPlanService", {
  effect: Effect.gen(function* () {
    const repo = yield* TierPlanRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)

    return {
      /** Creates a plan and, in the same transaction, its plan group named after it. */
      create: (organizationId: string, input: NewTierPlan): Effect.Effect<TierPlan, InvalidRequest> =>
        Effect.gen(function* () {
          const name = yield* checkName("plan", input.name)
          if (!Number.isInteger(input.creditAllowance) || input.creditAllowance < 0) {
            return yield* new InvalidRequest({ message: "credits: a plan's credit allowance is a whole number of at least 0." })
          }
          const row = {
            id: newId(),
            organization_id: organizationId,
            name,
            credit_allowance: input.creditAllowance,
            group_id: newId(),
            created_at: isoAt(clock.now()),
            archived_at: null
          }
          yield* inTransaction(repo.insert(row))
          return toTierPlan(row)
        }),

      /** Archives a plan: it stays on existing subscriptions and is `tier_not_found` for new provisioning. */
      archive: (organizationId: string, id: string): Effect.Effect<TierPlan, NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            yield* repo.archive(organizationId, id, isoAt(clock.now()))
            const row = yield* repo.find(organizationId, id)
            if (!row) return yield* new NotFound({ message: `No tier plan '${id}' in this organization.` })
            return toTierPlan(row)
          })
        ),

      /** Every plan of the organization (archived included, flagged), oldest first: administration's listing. */
      all: (organizationId: string): Effect.Effect<ReadonlyArray<TierPlan>> => Effect.map(repo.all(organizationId), (rows) => rows.map(toTierPlan)),

      /** One page of the organization's plans (archived included, flagged), oldest first. */
      list: (actor: Principal, request: ListPage) =>
        Effect.gen(function* () {
          const list = `tier-plans:${actor.organization.id}`
          const page = yield* cursors.request(list, request)
          const rows = yield* repo.page(actor.organization.id, page)
          const result = cursors.page(list, page, rows, (row) => [row.created_at, row.id])
          return { items: result.items.map(toTierPlan), nextCursor: result.nextCursor }
        })
    }
  }),
  dependencies: [TierPlanRepo.Default, Cursors.Default]
}) {}
