/**
 * Portal admissions: choose which user groups a Portal lets in. Plan groups may be admitted (the
 * Portal then admits the plan's holders). Knows nothing of HTTP.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { GroupNotFound, type InvalidRequest, type NotFound } from "../../platform/errors.js"
import { Cursors, type Page } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { GroupRepo } from "../groups/repo.js"
import { groupNotFound } from "../groups/service.js"
import { PortalService } from "../portals/service.js"
import { type Admission, type Admitted, toAdmission } from "./domain.js"
import { AdmissionRepo } from "./repo.js"

/** Admission operations for a calling principal. */
export class AdmissionService extends Effect.Service<AdmissionService>()("svc/AdmissionService", {
  effect: Effect.gen(function* () {
    const repo = yield* AdmissionRepo
    const groups = yield* GroupRepo
    const portals = yield* PortalService
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)

    return {
      /** One page of the groups a Portal admits, oldest admission first. */
      list: (
        actor: Principal,
        portalId: string,
        request: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
      ): Effect.Effect<Page<Admission>, NotFound | InvalidRequest> =>
        Effect.gen(function* () {
          const portal = yield* portals.found(actor.organization.id, portalId)
          const list = `portal-admissions:${actor.organization.id}:${portal.id}`
          const page = yield* cursors.request(list, request)
          const rows = yield* repo.list(portal.id, page)
          const served = cursors.page(list, page, rows, (row) => [row.created_at, row.group_id])
          return { items: served.items.map(toAdmission), nextCursor: served.nextCursor }
        }),

      /** Admits a group at a Portal (`created` false when it is admitted already); an unknown group is 422 `group_not_found`. */
      admit: (actor: Principal, portalId: string, groupId: string): Effect.Effect<Admitted, NotFound | GroupNotFound> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            const portal = yield* portals.found(org, portalId)
            const group = yield* groups.find(org, groupId)
            if (!group) return yield* new GroupNotFound({ message: `groupId: no user group '${groupId}' in this organization.` })
            const { row, created } = yield* repo.admit(org, portal.id, group.id, isoAt(clock.now()))
            return { ok: true as const, created, admission: toAdmission(row) }
          })
        ),

      /**
       * Stops admitting a group (`removed` false when it was not admitted); a group that is not the
       * organization's is 404 `not_found`, as any id in a path that matches nothing (conventions).
       */
      remove: (actor: Principal, portalId: string, groupId: string): Effect.Effect<{ readonly ok: true; readonly removed: boolean }, NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            const portal = yield* portals.found(org, portalId)
            const group = yield* groups.find(org, groupId)
            if (!group) return yield* groupNotFound(groupId)
            return { ok: true as const, removed: yield* repo.remove(portal.id, group.id) }
          })
        )
    }
  }),
  dependencies: [AdmissionRepo.Default, GroupRepo.Default, PortalService.Default, Cursors.Default]
}) {}
