/** Portals: created by an admin (`svc portals create`), listed through the API, found by id for admissions. */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { type InvalidRequest, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors } from "../../platform/pagination.js"
import { checkName, type ListPage } from "../plans/service.js"
import { type Portal, toPortal } from "./domain.js"
import { PortalRepo } from "./repo.js"

/** The Portals of an organization. */
export class PortalService extends Effect.Service<PortalService>()("svc/PortalService", {
  effect: Effect.gen(function* () {
    const repo = yield* PortalRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    return {
      /** Creates a Portal. */
      create: (organizationId: string, input: { readonly name: string }): Effect.Effect<Portal, InvalidRequest> =>
        Effect.gen(function* () {
          const row = { id: newId(), organization_id: organizationId, name: yield* checkName("Portal", input.name), created_at: isoAt(clock.now()) }
          yield* repo.insert(row)
          return toPortal(row)
        }),

      /** The organization's Portal, or `not_found` (another organization's id included). */
      found: (organizationId: string, id: string): Effect.Effect<Portal, NotFound> =>
        Effect.flatMap(repo.find(organizationId, id), (row) =>
          row ? Effect.succeed(toPortal(row)) : Effect.fail(new NotFound({ message: `No Portal '${id}' in this organization.` }))
        ),

      /** Every Portal of the organization, oldest first: administration's listing. */
      all: (organizationId: string): Effect.Effect<ReadonlyArray<Portal>> => Effect.map(repo.all(organizationId), (rows) => rows.map(toPortal)),

      /** One page of the organization's Portals, oldest first. */
      list: (actor: Principal, request: ListPage) =>
        Effect.gen(function* () {
          const list = `portals:${actor.organization.id}`
          const page = yield* cursors.request(list, request)
          const rows = yield* repo.page(actor.organization.id, page)
          const result = cursors.page(list, page, rows, (row) => [row.created_at, row.id])
          return { items: result.items.map(toPortal), nextCursor: result.nextCursor }
        })
    }
  }),
  dependencies: [PortalRepo.Default, Cursors.Default]
}) {}
